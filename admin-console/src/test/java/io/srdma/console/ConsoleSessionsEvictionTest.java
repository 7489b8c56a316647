package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.http.Cookie;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Sessions are bounded, the least recently used going first when full; but one user logging in
 * again and again (an auditor, or a stolen low-privilege password) must not push everyone else's
 * sessions out, the admin's included.
 */
class ConsoleSessionsEvictionTest {

  /** A routing context holding its data, with a request carrying {@code cookie} (or none). */
  static RoutingContext context(String cookie, Map<String, Object> data, Cookie[] set) {
    HttpServerResponse response =
        (HttpServerResponse)
            Proxy.newProxyInstance(
                ConsoleSessionsEvictionTest.class.getClassLoader(),
                new Class<?>[] {HttpServerResponse.class},
                (p, m, a) -> {
                  if (m.getName().equals("addCookie")) {
                    set[0] = (Cookie) a[0];
                    return p;
                  }
                  throw new UnsupportedOperationException(m.getName());
                });
    HttpServerRequest request =
        (HttpServerRequest)
            Proxy.newProxyInstance(
                ConsoleSessionsEvictionTest.class.getClassLoader(),
                new Class<?>[] {HttpServerRequest.class},
                (p, m, a) -> {
                  if (m.getName().equals("getCookie") && a.length == 1) {
                    return cookie == null ? null : Cookie.cookie(ConsoleSessions.COOKIE, cookie);
                  }
                  throw new UnsupportedOperationException(m.getName());
                });
    return (RoutingContext)
        Proxy.newProxyInstance(
            ConsoleSessionsEvictionTest.class.getClassLoader(),
            new Class<?>[] {RoutingContext.class},
            (p, m, a) ->
                switch (m.getName()) {
                  case "get" -> data.get((String) a[0]);
                  case "put" -> {
                    data.put((String) a[0], a[1]);
                    yield p;
                  }
                  case "remove" -> data.remove((String) a[0]);
                  case "response" -> response;
                  case "request" -> request;
                  case "next" -> null;
                  default -> throw new UnsupportedOperationException(m.getName());
                });
  }

  /** Logs a user in on a fresh request; returns the session cookie's value. */
  static String login(ConsoleSessions sessions, String user) {
    Cookie[] set = new Cookie[1];
    sessions.start(context(null, new HashMap<>(), set), user, new byte[32]);
    return set[0].getValue();
  }

  /** The session a request with this cookie gets, or null. */
  static ConsoleSessions.Session lookup(ConsoleSessions sessions, String cookie) {
    Map<String, Object> data = new HashMap<>();
    RoutingContext ctx = context(cookie, data, new Cookie[1]);
    sessions.attach(ctx);
    return ConsoleSessions.of(ctx);
  }

  @Test
  void shouldKeepTheAdminsSessionWhileAnotherUserLogsInOverAndOver() {
    ConsoleSessions sessions = new ConsoleSessions(Duration.ofMinutes(30), Clock.systemUTC());
    String admin = login(sessions, "admin");
    for (int i = 0; i < ConsoleSessions.MAX_SESSIONS; i++) {
      login(sessions, "auditor"); // each login is a new session; none is ever logged out
    }
    assertNotNull(
        lookup(sessions, admin),
        "the admin's session was pushed out by "
            + ConsoleSessions.MAX_SESSIONS
            + " logins of the auditor");
    assertEquals(1 + ConsoleSessions.MAX_SESSIONS_PER_USER, sessions.size());
  }

  @Test
  void shouldEndAUsersLeastRecentlyUsedSessionBeyondItsLimit() {
    ConsoleSessions sessions = new ConsoleSessions(Duration.ofMinutes(30), Clock.systemUTC());
    String first = login(sessions, "auditor");
    String second = login(sessions, "auditor");
    for (int i = 2; i < ConsoleSessions.MAX_SESSIONS_PER_USER; i++) {
      login(sessions, "auditor");
    }
    assertNotNull(lookup(sessions, first)); // used: now the second is the least recently used
    String last = login(sessions, "auditor");
    assertNotNull(lookup(sessions, first));
    assertNull(lookup(sessions, second));
    assertNotNull(lookup(sessions, last));
    assertEquals(ConsoleSessions.MAX_SESSIONS_PER_USER, sessions.size());
  }
}
