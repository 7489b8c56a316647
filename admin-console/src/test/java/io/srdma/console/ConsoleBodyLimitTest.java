package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request bodies are read only once it is known whose they are: an anonymous request is answered
 * before its body has arrived (nothing is buffered for it), the login takes a few KiB at most, and
 * a logged-in user still sends large bodies.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleBodyLimitTest {
  @TempDir static Path dir;
  static ConsoleFixture console;

  @BeforeAll
  static void start() {
    console = new ConsoleFixture(dir);
  }

  @AfterAll
  static void stop() {
    console.close();
  }

  private static HttpClient http(Vertx vertx) {
    return console.http(vertx);
  }

  /**
   * Starts a chunked POST, writes {@code first} bytes of it and waits for the answer without ever
   * sending the rest: an answer at all shows the server did not wait for the body.
   */
  private static int answerBeforeTheBodyEnds(Vertx vertx, String path, int first) throws Exception {
    HttpClient http = http(vertx);
    try {
      HttpClientRequest req =
          await(
              http.request(
                  new RequestOptions()
                      .setMethod(HttpMethod.POST)
                      .setHost("127.0.0.1")
                      .setPort(console.server.port())
                      .setURI(path)
                      .putHeader("Content-Type", "application/json")));
      req.setChunked(true);
      await(req.write(Buffer.buffer(new byte[first])));
      HttpClientResponse resp = await(req.response());
      int status = resp.statusCode();
      req.reset(); // the 15 MiB it announced never come
      return status;
    } finally {
      await(http.close());
    }
  }

  @Test
  void shouldAnswerAnAnonymousPostBeforeItsBodyArrives(Vertx vertx) throws Exception {
    assertEquals(401, answerBeforeTheBodyEnds(vertx, "/api/logout", 64 << 10));
    assertEquals(401, answerBeforeTheBodyEnds(vertx, "/api/policy/apply", 64 << 10));
  }

  @Test
  void shouldRefuseALoginBodyOverItsSmallLimit(Vertx vertx) throws Exception {
    assertEquals(
        413,
        answerBeforeTheBodyEnds(
            vertx, "/api/login", (int) ConsoleVerticle.LOGIN_BODY_BYTES + 1024));
    WebClient c = console.client(vertx);
    byte[] big = new byte[1 << 20];
    java.util.Arrays.fill(big, (byte) 'a');
    HttpResponse<Buffer> r =
        await(
            c.post("/api/login")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer(big)));
    assertError(r, 413, "too_large");
  }

  @Test
  void shouldStillTakeLargeBodiesFromALoggedInUser(Vertx vertx) throws Exception {
    WebClientSession s = WebClientSession.create(console.client(vertx));
    HttpResponse<Buffer> login =
        send(
            s,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", "admin").put("password", ConsoleFixture.ADMIN_PASSWORD),
            null);
    assertEquals(200, login.statusCode(), login.bodyAsString());
    String csrf = login.bodyAsJsonObject().getString("csrf");
    // 256 KiB of policy text: far over the login's limit, well under the 16 MiB of the API
    String text = FakeBackend.sampleText() + ("# padding\n").repeat(26_000);
    HttpResponse<Buffer> r =
        send(s, HttpMethod.POST, "/api/policy/validate", new JsonObject().put("text", text), csrf);
    assertEquals(200, r.statusCode(), r.bodyAsString());
    assertTrue(r.bodyAsJsonObject().getBoolean("changed"));
  }
}
