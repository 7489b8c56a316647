package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class LoginLimiterTest {
  static final class MutableClock extends Clock {
    Instant now = Instant.parse("2026-11-29T22:00:00Z");

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  @Test
  void shouldRefuseAttemptsBeyondTheLimitUntilTheWindowEnds() {
    MutableClock clock = new MutableClock();
    LoginLimiter l = new LoginLimiter(3, Duration.ofSeconds(60), clock);
    for (int i = 0; i < 3; i++) {
      assertEquals(0, l.tryAcquire("admin", "10.0.0.1"));
    }
    assertEquals(60, l.tryAcquire("admin", "10.0.0.1"));
    clock.now = clock.now.plusSeconds(45);
    assertEquals(15, l.tryAcquire("admin", "10.0.0.1"));
    assertEquals(0, l.tryAcquire("admin", "10.0.0.2"), "another address has its own budget");
    assertEquals(0, l.tryAcquire("auditor", "10.0.0.1"), "another user has its own budget");
    clock.now = clock.now.plusSeconds(15);
    assertEquals(0, l.tryAcquire("admin", "10.0.0.1"));
  }

  @Test
  void shouldClearTheKeyOnSuccess() {
    LoginLimiter l = new LoginLimiter(2, Duration.ofMinutes(1), new MutableClock());
    l.tryAcquire("admin", "h");
    l.tryAcquire("admin", "h");
    l.succeeded("admin", "h");
    assertEquals(0, l.tryAcquire("admin", "h"));
  }

  @Test
  void shouldLimitFreshUserNamesFromOneAddress() {
    MutableClock clock = new MutableClock();
    LoginLimiter l = new LoginLimiter(3, Duration.ofSeconds(60), clock);
    int budget = LoginLimiter.addressBudget(3);
    assertEquals(12, budget);
    for (int i = 0; i < budget; i++) {
      assertEquals(0, l.tryAcquire("guess-" + i, "10.0.0.1"), "attempt " + i);
    }
    long wait = l.tryAcquire("guess-new", "10.0.0.1");
    assertEquals(5, wait, "one token comes back every 60 s / 12");
    assertEquals(0, l.tryAcquire("guess-new", "10.0.0.2"), "another address has its own bucket");
    clock.now = clock.now.plusSeconds(5);
    assertEquals(0, l.tryAcquire("guess-new", "10.0.0.1"));
    assertTrue(l.tryAcquire("guess-newer", "10.0.0.1") > 0);
  }

  @Test
  void shouldNotChargeTheAddressForSuccessesOrRefusedAttempts() {
    LoginLimiter l = new LoginLimiter(3, Duration.ofSeconds(60), new MutableClock());
    for (int i = 0; i < 100; i++) {
      assertEquals(0, l.tryAcquire("admin", "h"), "people who type it right are never slowed");
      l.succeeded("admin", "h");
    }
    for (int i = 0; i < 3; i++) {
      assertEquals(0, l.tryAcquire("mallory", "h"));
    }
    for (int i = 0; i < 50; i++) {
      assertTrue(l.tryAcquire("mallory", "h") > 0);
    }
    // 12 tokens, 3 spent by mallory's counted attempts: 9 left, refused ones cost nothing
    for (int i = 0; i < 9; i++) {
      assertEquals(0, l.tryAcquire("u" + i, "h"), "attempt " + i);
    }
    assertTrue(l.tryAcquire("u9", "h") > 0);
    l.cancelled("u8", "h"); // counted but never checked: given back
    assertEquals(0, l.tryAcquire("u9", "h"));
  }

  @Test
  void shouldEvictTheLeastRecentlyUsedKeyWhenFullAndStillLetPeopleIn() {
    MutableClock clock = new MutableClock();
    LoginLimiter l = new LoginLimiter(1, Duration.ofSeconds(10), clock);
    assertEquals(0, l.tryAcquire("mallory", "10.9.9.9"));
    assertTrue(l.tryAcquire("mallory", "10.9.9.9") > 0);
    for (int i = 0; i < LoginLimiter.MAX_KEYS; i++) {
      assertEquals(0, l.tryAcquire("u" + i, "h" + i), "key " + i);
    }
    assertEquals(LoginLimiter.MAX_KEYS, l.size());
    assertEquals(LoginLimiter.MAX_KEYS, l.addresses());
    // a full table no longer refuses everyone: a legitimate login goes ahead
    assertEquals(0, l.tryAcquire("admin", "10.0.0.1"));
    assertEquals(LoginLimiter.MAX_KEYS, l.size());
    // the least recently used key (u0@h0) went; the most recent ones are still limited
    assertEquals(0, l.tryAcquire("u0", "h0"));
    assertTrue(
        l.tryAcquire("u" + (LoginLimiter.MAX_KEYS - 1), "h" + (LoginLimiter.MAX_KEYS - 1)) > 0);
  }
}
