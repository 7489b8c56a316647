package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Session ids as an attacker replays them, each cookie sent by hand (a client's cookie jar would
 * drop a cleared one and hide whether the server still honours it): a login always issues a new id
 * and ends the one it came with (no fixation), and a logged-out id is refused.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleSessionRotationTest {
  @TempDir Path dir;

  @Test
  void shouldIssueANewIdAtEveryLoginAndEndTheOneItCameWith(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClient client = console.client(vertx);
      String first = cookie(login(client, "auditor", ConsoleFixture.AUDITOR_PASSWORD, null));
      HttpResponse<Buffer> again = login(client, "admin", ConsoleFixture.ADMIN_PASSWORD, first);
      String second = cookie(again);
      assertNotEquals(first, second, "the login kept the id it came with");
      assertError(me(client, first), 401, "not_authenticated");
      HttpResponse<Buffer> me = me(client, second);
      assertEquals(200, me.statusCode(), me.bodyAsString());
      assertEquals("admin", me.bodyAsJsonObject().getString("user"));
      assertEquals(1, console.server.sessionCount(), "the first session is gone");
    }
  }

  @Test
  void shouldRefuseALoggedOutIdReplayed(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClient client = console.client(vertx);
      HttpResponse<Buffer> in = login(client, "admin", ConsoleFixture.ADMIN_PASSWORD, null);
      String id = cookie(in);
      HttpResponse<Buffer> out =
          await(
              client
                  .post("/api/logout")
                  .putHeader("Cookie", id)
                  .putHeader(AuthRoutes.CSRF_HEADER, in.bodyAsJsonObject().getString("csrf"))
                  .send());
      assertEquals(204, out.statusCode(), out.bodyAsString());
      assertError(me(client, id), 401, "not_authenticated");
      assertEquals(0, console.server.sessionCount());
    }
  }

  private static HttpResponse<Buffer> login(
      WebClient client, String user, String password, String withCookie) throws Exception {
    var r = client.post("/api/login");
    if (withCookie != null) {
      r.putHeader("Cookie", withCookie);
    }
    HttpResponse<Buffer> in =
        await(r.sendJsonObject(new JsonObject().put("user", user).put("password", password)));
    assertEquals(200, in.statusCode(), in.bodyAsString());
    return in;
  }

  private static HttpResponse<Buffer> me(WebClient client, String cookie) throws Exception {
    return await(client.get("/api/me").putHeader("Cookie", cookie).send());
  }

  /** The session cookie a response set, as a {@code Cookie} header value. */
  private static String cookie(HttpResponse<Buffer> r) {
    String c =
        r.cookies().stream()
            .filter(x -> x.startsWith(ConsoleSessions.COOKIE + "="))
            .findFirst()
            .orElseThrow();
    return c.substring(0, c.indexOf(';'));
  }
}
