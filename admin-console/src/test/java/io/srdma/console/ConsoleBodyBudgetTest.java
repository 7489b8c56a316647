package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A logged-in user (an auditor is enough) starts request bodies on many connections and never
 * finishes them. Each request either is refused before its body is read (a role it lacks, a route
 * that takes no body, the session's, the user's or the console's share of buffered bodies used up)
 * or counts its whole declared length against the console's budget while it is read: what the
 * console buffers at once stays bounded whatever one user does.
 *
 * <p>"Before its body is read": the test writes the first 64 KiB of a larger body and waits for the
 * answer without ever sending the rest; an answer at all shows the console did not wait for it.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class ConsoleBodyBudgetTest {
  private static final int FIRST = 64 << 10;
  private static final long MIB = 1L << 20;

  /** How long an answer that does not wait for the body may take: none is near it. */
  private static final long PROMPT_SECONDS = 5;

  @TempDir Path dir;
  ConsoleFixture console;
  HttpClient http;
  final List<HttpClientRequest> open = new ArrayList<>();

  /**
   * The answer of each request started, read from the moment it is made: a response's body is
   * delivered as it arrives, so a handler attached later could miss it.
   */
  final java.util.Map<HttpClientRequest, Future<Answer>> answers =
      new java.util.concurrent.ConcurrentHashMap<>();

  @BeforeEach
  void start(Vertx vertx) {
    console = new ConsoleFixture(dir);
    http = vertx.createHttpClient(console.httpOptions(), new PoolOptions().setHttp1MaxSize(32));
  }

  @AfterEach
  void stop() throws Exception {
    for (HttpClientRequest r : open) {
      r.reset();
    }
    await(http.close());
    console.close();
  }

  /** A session's cookie and CSRF token. */
  private record Login(String cookie, String csrf) {}

  private Login login(Vertx vertx, String user, String password) throws Exception {
    HttpResponse<Buffer> r =
        await(
            console
                .client(vertx)
                .post("/api/login")
                .sendJsonObject(new JsonObject().put("user", user).put("password", password)));
    assertEquals(200, r.statusCode(), r.bodyAsString());
    String cookie =
        r.cookies().stream()
            .filter(c -> c.startsWith("__Host-srdma-session="))
            .map(c -> c.substring(0, c.indexOf(';')))
            .findFirst()
            .orElseThrow();
    return new Login(cookie, r.bodyAsJsonObject().getString("csrf"));
  }

  private Login auditor(Vertx vertx) throws Exception {
    return login(vertx, "auditor", ConsoleFixture.AUDITOR_PASSWORD);
  }

  private Login admin(Vertx vertx) throws Exception {
    return login(vertx, "admin", ConsoleFixture.ADMIN_PASSWORD);
  }

  /**
   * Starts a request of a session that announces {@code declared} bytes of body (chunked if
   * negative) and sends the first {@value #FIRST} of them (fewer if it announces fewer); the rest
   * never comes.
   */
  private HttpClientRequest start(Login l, HttpMethod method, String path, long declared)
      throws Exception {
    HttpClientRequest req =
        await(
            http.request(
                new RequestOptions()
                    .setMethod(method)
                    .setHost("127.0.0.1")
                    .setPort(console.server.port())
                    .setURI(path)
                    .putHeader("Content-Type", "application/json")
                    .putHeader("Cookie", l.cookie())
                    .putHeader(AuthRoutes.CSRF_HEADER, l.csrf())));
    open.add(req);
    answers.put(req, req.response().compose(r -> r.body().map(b -> new Answer(r, b))));
    if (declared < 0) {
      req.setChunked(true);
    } else {
      req.putHeader("Content-Length", Long.toString(declared));
    }
    int first = declared < 0 ? FIRST : (int) Math.min(FIRST, declared - 1);
    await(req.write(Buffer.buffer(new byte[first])));
    return req;
  }

  /** The answer to a request whose body has not all been sent: it must come anyway, promptly. */
  private JsonObject answeredBeforeTheBodyEnds(HttpClientRequest req, int status) throws Exception {
    Answer a;
    try {
      a =
          answers
              .get(req)
              .toCompletionStage()
              .toCompletableFuture()
              .get(PROMPT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      return fail(
          req.getMethod()
              + " "
              + req.getURI()
              + " was not answered while its body was incomplete: the console waits for it");
    }
    JsonObject body = new JsonObject(a.body());
    assertEquals(status, a.response().statusCode(), body.encode());
    assertTrue(a.response().getHeader("Content-Type").startsWith("application/json"));
    assertFalse(body.getString("message", "").isBlank(), body.encode());
    return body;
  }

  /** A response and its body, read as it arrived. */
  private record Answer(HttpClientResponse response, Buffer body) {}

  /** Whether a request is still unanswered (its body being read), asked without waiting. */
  private boolean unanswered(HttpClientRequest req) {
    return !answers.get(req).isComplete();
  }

  @Test
  void shouldRefuseAnAuditorsApplyBeforeReadingItsBody(Vertx vertx) throws Exception {
    Login auditor = auditor(vertx);
    JsonObject e =
        answeredBeforeTheBodyEnds(
            start(auditor, HttpMethod.POST, "/api/policy/apply", 16 * MIB), 403);
    assertEquals("forbidden", e.getString("code"));
    e = answeredBeforeTheBodyEnds(start(auditor, HttpMethod.POST, "/api/policy/apply", -1), 403);
    assertEquals("forbidden", e.getString("code"));
  }

  @Test
  void shouldRefuseABodyOnARouteThatTakesNone(Vertx vertx) throws Exception {
    Login admin = admin(vertx);
    String[][] routes = {
      {"POST", "/api/logout"},
      {"GET", "/api/stats"},
      {"GET", "/api/audit/verify"},
      {"DELETE", "/api/grants/g-1"},
      {"DELETE", "/api/cluster/grants/h1/1"},
    };
    for (String[] r : routes) {
      for (long declared : new long[] {8 * MIB, -1}) {
        JsonObject e =
            answeredBeforeTheBodyEnds(start(admin, HttpMethod.valueOf(r[0]), r[1], declared), 413);
        assertEquals("too_large", e.getString("code"), r[0] + " " + r[1]);
        assertTrue(e.getString("message").contains("takes no request body"), e.encode());
      }
    }
    assertTrue(
        console.backend.revokedBy.isEmpty(), "nothing revoked: " + console.backend.revokedBy);
  }

  @Test
  void shouldReadAtMostOneLongestBodyAtATimePerSession(Vertx vertx) throws Exception {
    Login auditor = auditor(vertx);
    HttpClientRequest first = start(auditor, HttpMethod.POST, "/api/policy/validate", 16 * MIB);
    awaitReserved(16 * MIB, "while the first body is read");
    JsonObject e =
        answeredBeforeTheBodyEnds(
            start(auditor, HttpMethod.POST, "/api/policy/validate", 4 * MIB), 429);
    assertEquals("body_busy", e.getString("code"));
    assertTrue(e.getString("message").contains("a session's most at once is 16 MiB"), e.encode());
    assertTrue(unanswered(first), "the first body is still being read");
    awaitReserved(16 * MIB, "after the refusal");
  }

  @Test
  void shouldKeepTheBytesBufferedAtOnceWithinTheConsolesBudget(Vertx vertx) throws Exception {
    // the admin's sessions take at most the user's share, the auditor's what is left
    List<Login> admins = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      admins.add(admin(vertx));
    }
    List<Login> auditors = List.of(auditor(vertx), auditor(vertx));
    List<HttpClientRequest> reading = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      reading.add(start(admins.get(i), HttpMethod.POST, "/api/policy/validate", 16 * MIB));
      awaitReserved((i + 1) * 16 * MIB, "while the admin's bodies are read");
    }
    JsonObject user =
        answeredBeforeTheBodyEnds(
            start(admins.get(3), HttpMethod.POST, "/api/policy/apply", 16 * MIB), 429);
    assertEquals("body_busy", user.getString("code"));
    assertTrue(user.getString("message").contains("user 'admin'"), user.encode());
    reading.add(start(auditors.get(0), HttpMethod.POST, "/api/policy/validate", 16 * MIB));
    awaitReserved(RequestBodies.BUDGET_BYTES, "with the whole budget reserved");
    JsonObject full =
        answeredBeforeTheBodyEnds(
            start(auditors.get(1), HttpMethod.POST, "/api/policy/validate", 1024), 503);
    assertEquals("body_busy", full.getString("code"));
    assertTrue(full.getString("message").contains("64 MiB"), full.encode());
    for (HttpClientRequest r : reading) {
      assertTrue(unanswered(r), "a body within the budget is being read");
    }
    awaitReserved(RequestBodies.BUDGET_BYTES, "after the refusal");

    // bodies cut off give their bytes back: the console reads again
    for (HttpClientRequest r : reading) {
      r.reset();
    }
    awaitReserved(0, "after the resets");
    HttpClientRequest chunked = start(auditors.get(1), HttpMethod.POST, "/api/policy/validate", -1);
    awaitReserved(RequestBodies.MAX_BODY_BYTES, "while a chunked body is read");
    assertTrue(unanswered(chunked), "a chunked body is read within the budget");
  }

  @Test
  void shouldStillReadABodyWithinTheLimitsAndGiveItsBytesBack(Vertx vertx) throws Exception {
    Login auditor = auditor(vertx);
    for (int i = 0; i < 2; i++) {
      byte[] text = new JsonObject().put("text", FakeBackend.sampleText()).encode().getBytes(UTF_8);
      HttpClientRequest req =
          await(
              http.request(
                  new RequestOptions()
                      .setMethod(HttpMethod.POST)
                      .setHost("127.0.0.1")
                      .setPort(console.server.port())
                      .setURI("/api/policy/validate")
                      .putHeader("Content-Type", "application/json")
                      .putHeader("Cookie", auditor.cookie())
                      .putHeader(AuthRoutes.CSRF_HEADER, auditor.csrf())));
      Answer a =
          await(req.send(Buffer.buffer(text)).compose(r -> r.body().map(b -> new Answer(r, b))));
      JsonObject body = new JsonObject(a.body());
      assertEquals(200, a.response().statusCode(), body.encode());
      assertTrue(body.getBoolean("valid"), body.encode());
    }
    awaitReserved(0, "after the answers");
  }

  /**
   * Waits (bounded, no sleep) until the console has reserved {@code expected} body bytes: it does
   * so when it reads a request's head, which may be just after the client wrote it; it gives them
   * back when the request has ended on its side, which may be just after the client saw the answer
   * or the reset.
   */
  private void awaitReserved(long expected, String when) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (console.server.bodyBytesReserved() != expected && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertEquals(expected, console.server.bodyBytesReserved(), "body bytes reserved " + when);
  }
}
