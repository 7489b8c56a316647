package io.srdma.console;

import static io.srdma.console.ConsoleSessionsEvictionTest.login;
import static io.srdma.console.ConsoleSessionsEvictionTest.lookup;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A login session ends at its absolute lifetime however busy it is: a stolen cookie kept alive by
 * polling (or a browser tab left on the live overview) does not live for ever.
 */
class ConsoleSessionsLifetimeTest {

  @Test
  void shouldEndASessionKeptAliveByPollingAtTheDefaultLifetime() {
    LoginLimiterTest.MutableClock clock = new LoginLimiterTest.MutableClock();
    ConsoleSessions sessions = new ConsoleSessions(Duration.ofMinutes(30), clock);
    String cookie = login(sessions, "admin");
    Duration step = Duration.ofMinutes(10); // well inside the idle timeout
    Duration polled = Duration.ZERO;
    Duration limit = ConsoleConfig.SESSION_LIFETIME_DEFAULT;
    while (polled.plus(step).compareTo(limit) < 0) {
      clock.now = clock.now.plus(step);
      polled = polled.plus(step);
      assertNotNull(lookup(sessions, cookie), "ended after " + polled);
    }
    clock.now = clock.now.plus(limit.minus(polled));
    assertNull(lookup(sessions, cookie), "still served after " + limit + " of polling");
    assertEquals(0, sessions.size(), "an ended session is not kept");
  }

  @Test
  void shouldEndAtTheConfiguredLifetimeForTheStreamAndForNewRequestsAlike() {
    LoginLimiterTest.MutableClock clock = new LoginLimiterTest.MutableClock();
    ConsoleSessions sessions = new ConsoleSessions(Duration.ofHours(2), Duration.ofHours(1), clock);
    String cookie = login(sessions, "auditor");
    ConsoleSessions.Session s = lookup(sessions, cookie);
    clock.now = clock.now.plus(Duration.ofMinutes(59));
    assertTrue(sessions.live(s), "the stream's check before its lifetime");
    assertNotNull(lookup(sessions, cookie));
    clock.now = clock.now.plus(Duration.ofMinutes(1));
    assertFalse(sessions.live(s), "the stream's check at its lifetime");
    assertNull(lookup(sessions, cookie));

    // a new login starts a new lifetime
    String again = login(sessions, "auditor");
    clock.now = clock.now.plus(Duration.ofMinutes(59));
    assertNotNull(lookup(sessions, again));
  }

  @Test
  void shouldForgetSessionsPastTheirLifetimeWhenAnotherLogsIn() {
    LoginLimiterTest.MutableClock clock = new LoginLimiterTest.MutableClock();
    ConsoleSessions sessions = new ConsoleSessions(Duration.ofHours(2), Duration.ofHours(1), clock);
    for (int i = 0; i < 6; i++) {
      String c = login(sessions, "user-" + i);
      clock.now = clock.now.plus(Duration.ofMinutes(20));
      lookup(sessions, c);
    }
    clock.now = clock.now.plus(Duration.ofMinutes(10));
    login(sessions, "admin");
    // logged in at 0, 20, …, 100 min; now 130 min: those of 80 and 100 min are within the hour
    // (none
    // is idle past the 2 h timeout: only the lifetime ends them)
    assertEquals(3, sessions.size());
  }
}
