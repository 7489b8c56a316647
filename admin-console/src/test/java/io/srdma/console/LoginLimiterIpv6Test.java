package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/**
 * Red team: the per-address login bucket keyed by the exact address text let a client holding an
 * IPv6 /64 (as every subscriber does) take a fresh address — and a fresh bucket — for every guess,
 * with fresh user names past the per-user window too. The host's own pre-authentication limits
 * count IPv6 by /64; the console now does the same.
 */
class LoginLimiterIpv6Test {
  @Test
  void freshAddressesOfOneIpv6Slash64ShareOneBucket() {
    LoginLimiter limiter =
        new LoginLimiter(5, Duration.ofMinutes(1), Clock.fixed(Instant.EPOCH, ZoneOffset.UTC));
    int budget = LoginLimiter.addressBudget(5);
    int allowed = 0;
    for (int i = 0; i < budget * 4; i++) {
      String address = "2001:db8:1:2:" + Integer.toHexString(i + 1) + ":0:0:" + i % 7;
      if (limiter.tryAcquire("user-" + i, address) == 0) {
        allowed++;
      }
    }
    assertEquals(budget, allowed, "one /64 gets one address budget of guesses");
    assertTrue(
        limiter.tryAcquire("someone", "2001:db8:1:3::1") == 0, "the next /64 is another client");
    assertTrue(limiter.tryAcquire("someone", "192.0.2.7") == 0, "IPv4 is unaffected");
  }

  @Test
  void addressKeysAreLiteralsOnlyAndNeverResolved() {
    assertEquals("2001:db8:1:2:0:0:0:0/64", LoginLimiter.addressKey("2001:db8:1:2:aa:bb:cc:dd"));
    assertEquals("2001:db8:1:2:0:0:0:0/64", LoginLimiter.addressKey("[2001:db8:1:2::9%eth0]"));
    assertEquals("192.0.2.7", LoginLimiter.addressKey("::ffff:192.0.2.7"));
    assertEquals("192.0.2.7", LoginLimiter.addressKey("192.0.2.7"));
    assertEquals("not:an:address:zz", LoginLimiter.addressKey("not:an:address:zz"));
    assertEquals("example.org", LoginLimiter.addressKey("example.org"));
  }
}
