package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single host's revoke leaves an audit line whatever its outcome, as the fleet revoke does
 * ({@link ConsoleClusterTest}): a grant that was listed but ended (expired, released, revoked by
 * someone else) before the console's revoke reached it is a {@code revoke}/{@code failure} line
 * naming the console user, never silence.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleRevokeAuditTest {
  @TempDir Path dir;

  private static List<JsonObject> revokeLines(ConsoleFixture console, String grant)
      throws Exception {
    return Files.readAllLines(console.log.file(), StandardCharsets.US_ASCII).stream()
        .map(JsonObject::new)
        .filter(l -> "revoke".equals(l.getString("action")))
        .filter(l -> grant.equals(l.getString("grant")))
        .toList();
  }

  private static String login(WebClientSession s) throws Exception {
    HttpResponse<Buffer> r =
        send(
            s,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", "admin").put("password", ConsoleFixture.ADMIN_PASSWORD),
            null);
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return r.bodyAsJsonObject().getString("csrf");
  }

  @Test
  void shouldAuditARevokeThatLostTheRaceWithTheGrantsEndAsAFailure(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClientSession admin = WebClientSession.create(console.client(vertx));
      String csrf = login(admin);
      // listed when the console looked it up, ended by the host before the revoke reached it
      console.backend.beforeRevoke = console.backend::end;

      assertError(send(admin, HttpMethod.DELETE, "/api/grants/g-3", null, csrf), 404, "not_found");

      List<JsonObject> lines = revokeLines(console, "g-3");
      assertEquals(1, lines.size(), "one line for the operator's revoke: " + lines);
      JsonObject line = lines.get(0);
      assertEquals("failure", line.getString("outcome"), line.encode());
      assertEquals("admin", line.getString("actor"), line.encode());
      assertEquals("console", line.getString("reason"), line.encode());
      assertEquals("srdma://acme/checkpointer", line.getString("peer"), line.encode());
      assertEquals("acme", line.getString("tenant"), line.encode());
      assertTrue(line.getString("detail").contains("ended"), line.encode());
      assertFalse(line.encode().contains(csrf), "no session secret in the log");

      // an id that was never listed: nothing was attempted, no line (as the fleet revoke)
      assertError(send(admin, HttpMethod.DELETE, "/api/grants/g-77", null, csrf), 404, "not_found");
      assertEquals(List.of(), revokeLines(console, "g-77"));

      // a revoke that happens: one success line, written by the host (actor = the console user)
      console.backend.beforeRevoke = null;
      assertEquals(200, send(admin, HttpMethod.DELETE, "/api/grants/g-4", null, csrf).statusCode());
      lines = revokeLines(console, "g-4");
      assertEquals(1, lines.size(), lines.toString());
      assertEquals("success", lines.get(0).getString("outcome"));
      assertEquals("admin", lines.get(0).getString("actor"));
    }
  }
}
