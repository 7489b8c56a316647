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
  void shouldStayBoundedUnderManyKeys() {
    MutableClock clock = new MutableClock();
    LoginLimiter l = new LoginLimiter(1, Duration.ofSeconds(10), clock);
    for (int i = 0; i < LoginLimiter.MAX_KEYS; i++) {
      assertEquals(0, l.tryAcquire("u" + i, "h"));
    }
    assertTrue(l.tryAcquire("one-more", "h") > 0, "a full table refuses new keys");
    clock.now = clock.now.plusSeconds(10);
    assertEquals(0, l.tryAcquire("one-more", "h"), "expired keys are purged");
    assertEquals(1, l.size());
  }
}
