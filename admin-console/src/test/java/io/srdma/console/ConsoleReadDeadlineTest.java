package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slowloris: a client that sends a byte now and then keeps the connection's idle timeout away, so
 * without a deadline of its own a request's head or body could be read for ever — and a body, once
 * admitted, holds its session's and user's share of the body budget (and a heavy-request place) all
 * that time. The console's read timeout (1 s here, 60 s by default) ends each: an unanswered
 * request gets {@code 408 request_timeout}, its budget is given back and its connection closed.
 *
 * <p>The client trickles a byte every {@value #TRICKLE_MS} ms, far more often than the idle
 * timeout; each test waits for the outcome (bounded by {@link #WAIT}), never for a time.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleReadDeadlineTest {
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(1);
  private static final long TRICKLE_MS = 100;

  /** Bound on each wait: many read timeouts, far below the 60 s idle timeout. */
  private static final Duration WAIT = Duration.ofSeconds(15);

  private static final long MIB = 1L << 20;

  @TempDir Path dir;
  ConsoleFixture console;
  HttpClient http;

  @BeforeEach
  void start(Vertx vertx) {
    console = new ConsoleFixture(dir, new ConsoleConfig().requestReadTimeout(READ_TIMEOUT));
    // a connection per request: none is left idle past the read timeout for a later request
    http = vertx.createHttpClient(console.httpOptions().setKeepAlive(false));
  }

  @AfterEach
  void stop() throws Exception {
    await(http.close());
    console.close();
  }

  private record Login(String cookie, String csrf) {}

  private Login admin() throws Exception {
    JsonObject creds =
        new JsonObject().put("user", "admin").put("password", ConsoleFixture.ADMIN_PASSWORD);
    Answer a =
        await(
            http.request(
                    new RequestOptions()
                        .setMethod(HttpMethod.POST)
                        .setURI("/api/login")
                        .putHeader("Content-Type", "application/json"))
                .compose(r -> r.send(creds.toBuffer()))
                .compose(Answer::read));
    assertEquals(200, a.status(), a.body().toString());
    String cookie =
        a.cookies().stream()
            .filter(c -> c.startsWith(ConsoleSessions.COOKIE + "="))
            .map(c -> c.substring(0, c.indexOf(';')))
            .findFirst()
            .orElseThrow();
    return new Login(cookie, a.body().toJsonObject().getString("csrf"));
  }

  /** A response, its cookies and its body, read as they arrive. */
  private record Answer(int status, java.util.List<String> cookies, Buffer body) {
    static Future<Answer> read(HttpClientResponse r) {
      return r.body().map(b -> new Answer(r.statusCode(), r.cookies(), b));
    }
  }

  /** A request whose body trickles: its first bytes, then one more byte every now and then. */
  private final class Trickle {
    final HttpClientRequest request;
    final Future<Answer> answer;
    final Promise<Void> closed = Promise.promise();
    final AtomicInteger sent = new AtomicInteger();

    Trickle(Vertx vertx, RequestOptions options, long declared, byte[] first) throws Exception {
      request = await(http.request(options.putHeader("Content-Length", Long.toString(declared))));
      answer = request.response().compose(Answer::read);
      request.connection().closeHandler(v -> closed.tryComplete());
      await(request.write(Buffer.buffer(first)));
      long timer =
          vertx.setPeriodic(
              TRICKLE_MS,
              id -> {
                if (!closed.future().isComplete()) {
                  request.write(Buffer.buffer(" ")).onSuccess(v -> sent.incrementAndGet());
                }
              });
      closed.future().onComplete(v -> vertx.cancelTimer(timer));
    }
  }

  @Test
  void shouldAnswer408AndGiveBackTheBudgetOfABodyTrickledPastTheTimeout(Vertx vertx)
      throws Exception {
    Login admin = admin();
    Trickle t =
        new Trickle(
            vertx,
            new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setURI("/api/policy/validate")
                .putHeader("Content-Type", "application/json")
                .putHeader("Cookie", admin.cookie())
                .putHeader(AuthRoutes.CSRF_HEADER, admin.csrf()),
            16 * MIB,
            "{\"text\":\"".getBytes(US_ASCII));
    awaitCondition(
        () -> console.server.bodyBytesReserved() == 16 * MIB, "the body's length reserved");
    // before the fix: no answer ever comes while the bytes trickle in, the 16 MiB stay reserved
    Answer a = awaitFuture(t.answer, "a 408 while the body still trickles");
    JsonObject e = a.body().toJsonObject();
    assertEquals(408, a.status(), e.encode());
    assertEquals("request_timeout", e.getString("code"), e.encode());
    assertTrue(e.getString("message").contains("request body did not arrive"), e.encode());
    assertTrue(t.sent.get() > 0, "bytes trickled in meanwhile");
    awaitCondition(() -> console.server.bodyBytesReserved() == 0, "the budget given back");
    awaitFuture(t.closed.future(), "the connection closed");

    // the session's budget and heavy-request place are free: a whole body is read again
    Answer ok =
        await(
            http.request(
                    new RequestOptions()
                        .setMethod(HttpMethod.POST)
                        .setURI("/api/policy/validate")
                        .putHeader("Content-Type", "application/json")
                        .putHeader("Cookie", admin.cookie())
                        .putHeader(AuthRoutes.CSRF_HEADER, admin.csrf()))
                .compose(
                    r -> r.send(new JsonObject().put("text", FakeBackend.sampleText()).toBuffer()))
                .compose(Answer::read));
    assertEquals(200, ok.status(), ok.body().toString());
  }

  @Test
  void shouldAnswer408ToAnAnonymousLoginBodyTrickledPastTheTimeout(Vertx vertx) throws Exception {
    Trickle t =
        new Trickle(
            vertx,
            new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setURI("/api/login")
                .putHeader("Content-Type", "application/json"),
            ConsoleVerticle.LOGIN_BODY_BYTES,
            "{".getBytes(US_ASCII));
    Answer a = awaitFuture(t.answer, "a 408 while the login body still trickles");
    assertEquals(408, a.status(), a.body().toString());
    assertEquals("request_timeout", a.body().toJsonObject().getString("code"));
    awaitFuture(t.closed.future(), "the connection closed");
  }

  @Test
  void shouldCloseAConnectionWhoseHeadTricklesPastTheTimeout() throws Exception {
    try (SSLSocket s =
        (SSLSocket)
            console.tls().getSocketFactory().createSocket("127.0.0.1", console.server.port())) {
      s.startHandshake();
      OutputStream out = s.getOutputStream();
      out.write("GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".getBytes(US_ASCII));
      out.flush();
      s.setSoTimeout((int) TRICKLE_MS);
      InputStream in = s.getInputStream();
      long deadline = System.nanoTime() + WAIT.toNanos();
      int trickled = 0;
      // before the fix: the header grows a byte at a time and the connection stays open
      while (true) {
        try {
          if (in.read() < 0) {
            break;
          }
          fail("the console answered a request whose head never ended");
        } catch (SocketTimeoutException stillOpen) {
          if (System.nanoTime() > deadline) {
            fail("a connection whose head trickled in for " + WAIT + " is still open");
          }
          out.write('a');
          out.flush();
          trickled++;
        } catch (IOException reset) {
          break; // closed by the server
        }
      }
      assertTrue(trickled > 0, "bytes trickled in before the close");
    }
  }

  @Test
  void shouldKeepAResponseThatOutlastsTheTimeoutOnceItsRequestIsRead(Vertx vertx) throws Exception {
    Login admin = admin();
    HttpClientResponse r =
        await(
            http.request(
                    new RequestOptions()
                        .setMethod(HttpMethod.GET)
                        .setURI("/api/stream")
                        .putHeader("Cookie", admin.cookie()))
                .compose(HttpClientRequest::send));
    assertEquals(200, r.statusCode());
    Promise<Void> closed = Promise.promise();
    r.request().connection().closeHandler(v -> closed.tryComplete());
    // the fixture streams every 200 ms: this many events span several read timeouts
    int wanted = (int) (3 * READ_TIMEOUT.toMillis() / 200);
    AtomicInteger events = new AtomicInteger();
    r.handler(b -> events.addAndGet(b.toString().split("\n\n", -1).length - 1));
    awaitCondition(() -> events.get() >= wanted || closed.future().isComplete(), "the events");
    assertFalse(closed.future().isComplete(), "the stream was cut after " + events + " events");
    r.request().connection().close();
  }

  private static <T> T awaitFuture(Future<T> f, String what) throws Exception {
    try {
      return f.toCompletionStage()
          .toCompletableFuture()
          .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      return fail("not within " + WAIT + ": " + what);
    }
  }

  private static void awaitCondition(BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + WAIT + ": " + what);
      }
      Thread.sleep(10);
    }
  }
}
