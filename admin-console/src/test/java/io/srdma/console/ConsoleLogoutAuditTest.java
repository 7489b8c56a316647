package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A logout is audited like the login: an {@code authenticate} line with the same fields (actor the
 * user, the client address), reason {@code logout}; never the session cookie or CSRF token; one
 * line per session, however many logouts of it race.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleLogoutAuditTest {
  @TempDir Path dir;

  /** Logs in; returns the login response (its cookie and CSRF token). */
  private static HttpResponse<Buffer> login(WebClientSession s, String user, String password)
      throws Exception {
    HttpResponse<Buffer> r =
        send(
            s,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", user).put("password", password),
            null);
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return r;
  }

  private static List<JsonObject> lines(ConsoleFixture console, String reason) throws Exception {
    return Files.readAllLines(console.log.file(), StandardCharsets.US_ASCII).stream()
        .map(JsonObject::new)
        .filter(l -> "authenticate".equals(l.getString("action")))
        .filter(l -> reason.equals(l.getString("reason")))
        .toList();
  }

  private static String cookieValue(HttpResponse<Buffer> r) {
    String c =
        r.cookies().stream()
            .filter(x -> x.startsWith(ConsoleSessions.COOKIE + "="))
            .findFirst()
            .orElseThrow();
    return c.substring(ConsoleSessions.COOKIE.length() + 1, c.indexOf(';'));
  }

  @Test
  void shouldAuditALogoutLikeTheLoginWithoutItsSecrets(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClientSession admin = WebClientSession.create(console.client(vertx));
      HttpResponse<Buffer> in = login(admin, "admin", ConsoleFixture.ADMIN_PASSWORD);
      String csrf = in.bodyAsJsonObject().getString("csrf");
      String cookie = cookieValue(in);

      assertEquals(204, send(admin, HttpMethod.POST, "/api/logout", null, csrf).statusCode());

      List<JsonObject> out = lines(console, "logout");
      assertEquals(1, out.size(), "one logout line: " + out);
      JsonObject logout = out.get(0);
      JsonObject loginLine = lines(console, "ok").get(0);
      assertEquals("success", logout.getString("outcome"), logout.encode());
      assertEquals("admin", logout.getString("actor"), logout.encode());
      assertEquals(loginLine.getString("detail"), logout.getString("detail"), logout.encode());
      assertEquals(loginLine.fieldNames(), logout.fieldNames(), "the login's fields");
      String log = Files.readString(console.log.file(), StandardCharsets.US_ASCII);
      assertFalse(log.contains(cookie), "the session cookie is in the audit log");
      assertFalse(log.contains(csrf), "the CSRF token is in the audit log");

      // logged out: the next request is unauthenticated, and a logout of it audits nothing
      assertError(
          send(admin, HttpMethod.POST, "/api/logout", null, csrf), 401, "not_authenticated");
      assertEquals(1, lines(console, "logout").size());
    }
  }

  @Test
  void shouldAuditOneLineWhenLogoutsOfOneSessionRace(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClientSession auditor = WebClientSession.create(console.client(vertx));
      String csrf =
          login(auditor, "auditor", ConsoleFixture.AUDITOR_PASSWORD)
              .bodyAsJsonObject()
              .getString("csrf");
      List<Future<HttpResponse<Buffer>>> logouts = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        logouts.add(auditor.post("/api/logout").putHeader(AuthRoutes.CSRF_HEADER, csrf).send());
      }
      int ended = 0;
      for (Future<HttpResponse<Buffer>> f : logouts) {
        int status = await(f).statusCode();
        assertTrue(status == 204 || status == 401, "status " + status);
        ended += status == 204 ? 1 : 0;
      }
      assertTrue(ended >= 1, "no logout answered 204");
      List<JsonObject> out = lines(console, "logout");
      assertEquals(1, out.size(), "one session ended, one line: " + out);
      assertEquals("auditor", out.get(0).getString("actor"));
      assertEquals(0, console.server.sessionCount());
    }
  }
}
