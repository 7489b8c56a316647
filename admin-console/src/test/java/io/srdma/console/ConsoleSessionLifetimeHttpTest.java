package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Over HTTPS: a session polled without pause (never idle) is refused at its lifetime with exactly
 * the answer a request without a login gets.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleSessionLifetimeHttpTest {
  private static final Duration LIFETIME = Duration.ofSeconds(3);

  @TempDir Path dir;

  @Test
  void shouldRefuseASessionKeptAliveByPollingAtItsLifetimeAsUnauthenticated(Vertx vertx)
      throws Exception {
    try (ConsoleFixture console =
        new ConsoleFixture(dir, new ConsoleConfig().sessionLifetime(LIFETIME))) {
      WebClient client = console.client(vertx);
      WebClientSession admin = WebClientSession.create(client);
      long loggedIn = System.nanoTime();
      HttpResponse<Buffer> in =
          send(
              admin,
              HttpMethod.POST,
              "/api/login",
              new JsonObject().put("user", "admin").put("password", ConsoleFixture.ADMIN_PASSWORD),
              null);
      assertEquals(200, in.statusCode(), in.bodyAsString());

      // poll until refused, bounded: the idle timeout (30 min) is never near
      long deadline = loggedIn + LIFETIME.toNanos() + TimeUnit.SECONDS.toNanos(20);
      int served = 0;
      HttpResponse<Buffer> r;
      while ((r = send(admin, HttpMethod.GET, "/api/me", null, null)).statusCode() == 200) {
        served++;
        assertTrue(System.nanoTime() - deadline < 0, "still served after " + served + " polls");
      }
      assertTrue(served > 0, "refused before any poll was served: " + r.bodyAsString());
      assertTrue(
          System.nanoTime() - loggedIn >= LIFETIME.toNanos(),
          "refused before its lifetime: " + r.bodyAsString());

      HttpResponse<Buffer> anonymous = send(client, HttpMethod.GET, "/api/me", null, null);
      assertEquals(anonymous.statusCode(), r.statusCode(), r.bodyAsString());
      assertEquals(anonymous.bodyAsJsonObject(), r.bodyAsJsonObject());
      assertEquals(0, console.server.sessionCount(), "the ended session is forgotten");
    }
  }
}
