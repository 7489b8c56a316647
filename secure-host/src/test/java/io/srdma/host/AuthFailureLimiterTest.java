package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The failure table stays bounded, and its sweep rare, whatever the number of addresses; a silent
 * close costs the share of the deadline it held.
 */
class AuthFailureLimiterTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong now = new AtomicLong(1_000 * SECOND);
  private final AuthFailureLimiter limiter = new AuthFailureLimiter(3, now::get);

  private static InetAddress ip(int n) throws UnknownHostException {
    return InetAddress.getByAddress(new byte[] {10, (byte) (n >> 16), (byte) (n >> 8), (byte) n});
  }

  private void failFrom(int first, int count) throws UnknownHostException {
    for (int i = first; i < first + count; i++) {
      limiter.failed(ip(i));
    }
  }

  @Test
  void shouldCapTheTableAndKeepTrackedAddressesBlocked() throws Exception {
    InetAddress attacker = ip(0);
    for (int i = 0; i < 3; i++) {
      limiter.failed(attacker);
    }
    assertTrue(limiter.blocked(attacker));
    failFrom(1, AuthFailureLimiter.MAX_TRACKED + 500);
    assertEquals(AuthFailureLimiter.MAX_TRACKED, limiter.tracked(), "never above the cap");
    assertEquals(501, limiter.untracked(), "the overflow is counted");
    assertTrue(limiter.blocked(attacker), "a full table evicts no live window");
    now.addAndGet(61 * SECOND);
    limiter.failed(ip(AuthFailureLimiter.MAX_TRACKED + 1_000));
    assertEquals(1, limiter.tracked(), "expired windows swept");
    assertFalse(limiter.blocked(attacker), "its minute is over");
  }

  @Test
  void shouldSweepAtMostOnceASecond() throws Exception {
    int batch = AuthFailureLimiter.SWEEP_ABOVE + 1;
    failFrom(0, batch); // window A at t
    now.addAndGet(SECOND / 2);
    failFrom(batch, batch); // window B at t + 0.5 s
    now.addAndGet(60 * SECOND - SECOND / 2 + SECOND / 5); // t + 60.2 s: A expired, B not
    limiter.failed(ip(3 * batch));
    assertEquals(batch + 1, limiter.tracked(), "A swept");
    now.addAndGet(SECOND / 2); // t + 60.7 s: B expired too, but the last sweep was 0.5 s ago
    limiter.failed(ip(3 * batch + 1));
    assertEquals(batch + 2, limiter.tracked(), "no second sweep within the second");
    now.addAndGet(SECOND * 6 / 10); // t + 61.3 s
    limiter.failed(ip(3 * batch + 2));
    assertEquals(3, limiter.tracked(), "B swept a second later");
  }

  @Test
  void shouldChargeASilentCloseTheShareOfTheDeadlineItHeld() throws Exception {
    long deadline = 2 * SECOND;
    InetAddress checker = ip(1);
    for (int i = 0; i < 1_000; i++) {
      limiter.heldSilently(checker, SECOND / 1_000, deadline); // health checks: 1 ms each
    }
    assertFalse(limiter.blocked(checker), "a thousand 1 ms health checks cost half a failure");
    InetAddress holder = ip(2);
    for (int i = 0; i < 4; i++) {
      assertFalse(limiter.blocked(holder), "after " + i + " holds");
      limiter.heldSilently(holder, deadline - SECOND / 50, deadline); // closed 20 ms before: 0.99
    }
    assertTrue(limiter.blocked(holder), "four slot-long silent holds refuse the address");
    InetAddress slow = ip(3);
    limiter.heldSilently(slow, 10 * deadline, deadline);
    limiter.heldSilently(slow, -5, deadline);
    limiter.failed(slow);
    assertFalse(limiter.blocked(slow), "a hold costs at most one failure, a negative one nothing");
    limiter.failed(slow);
    assertTrue(limiter.blocked(slow));
    now.addAndGet(61 * SECOND);
    assertFalse(limiter.blocked(holder), "its minute is over");
  }
}
