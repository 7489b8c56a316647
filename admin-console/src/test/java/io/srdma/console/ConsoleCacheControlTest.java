package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * No answer that may hold data is stored by a browser or a proxy, however the path that reached it
 * is spelled (the router serves {@code /metrics/} as {@code /metrics}); only scripts and
 * stylesheets, which hold none, may be cached.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleCacheControlTest {
  @TempDir Path dir;

  @Test
  void shouldForbidStoringEveryAnswerWhateverItsPathSpelling(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClient client = console.client(vertx);
      WebClientSession auditor = WebClientSession.create(client);
      HttpResponse<Buffer> in =
          send(
              auditor,
              HttpMethod.POST,
              "/api/login",
              new JsonObject()
                  .put("user", "auditor")
                  .put("password", ConsoleFixture.AUDITOR_PASSWORD),
              null);
      assertEquals(200, in.statusCode(), in.bodyAsString());

      for (String path :
          new String[] {
            "/metrics", "/metrics/", "/api/me", "/api/me/", "/index.html", "/", "/api"
          }) {
        HttpResponse<Buffer> r = send(auditor, HttpMethod.GET, path, null, null);
        assertEquals("no-store", r.getHeader("Cache-Control"), path + " (" + r.statusCode() + ")");
      }
      HttpResponse<Buffer> metrics = send(auditor, HttpMethod.GET, "/metrics/", null, null);
      assertEquals(200, metrics.statusCode(), "the router serves /metrics/ as /metrics");
      // anonymous answers too: the login redirect, a refusal, a missing page
      for (String path : new String[] {"/grants.html", "/api/grants", "/nope"}) {
        HttpResponse<Buffer> r = send(client, HttpMethod.GET, path, null, null);
        assertEquals("no-store", r.getHeader("Cache-Control"), path + " (" + r.statusCode() + ")");
      }
    }
  }

  @Test
  void shouldLetBrowsersCacheScriptsAndStylesheets(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClient client = console.client(vertx);
      for (String path : new String[] {"/app.css", "/common.js"}) {
        HttpResponse<Buffer> r = send(client, HttpMethod.GET, path, null, null);
        assertEquals(200, r.statusCode(), path);
        String cache = r.getHeader("Cache-Control");
        assertNotNull(cache, path);
        assertFalse(cache.contains("no-store"), path + ": " + cache);
      }
    }
  }
}
