package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A request target that is not a well-formed URI — a {@code %} not followed by two hex digits, a
 * raw control character — is answered 400 {@code bad_request} in the API's JSON before any route
 * reads it: never a 500, never an untyped answer, and nothing of it in the console's log (no stack
 * trace to flood it with, no terminal escape to forge lines with).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleRequestTargetTest {
  private static final String ESC = "\u001b";

  @TempDir Path dir;
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);

  @BeforeEach
  void captureLog() {
    logged.start();
    root.addAppender(logged);
  }

  @AfterEach
  void releaseLog() {
    root.detachAppender(logged);
    logged.stop();
  }

  /** What the console logged at WARN or above, and every line holding an escape character. */
  private List<String> suspicious() {
    return List.copyOf(logged.list).stream()
        .filter(
            e ->
                e.getLevel().isGreaterOrEqual(Level.WARN)
                    || text(e).contains(ESC)
                    || text(e).contains("\u007f"))
        .map(e -> e.getLevel() + " " + text(e))
        .toList();
  }

  private static String text(ILoggingEvent e) {
    return e.getFormattedMessage()
        + (e.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(e.getThrowableProxy()));
  }

  @Test
  void shouldAnswerMalformedPercentEncodingWith400BeforeAnyRoute(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClient client = console.client(vertx);
      // no account: a path the router cannot decode
      for (String path : new String[] {"/api/%zz", "/api/grants/%zz", "/%zz.html", "/metrics%"}) {
        HttpResponse<Buffer> r = send(client, HttpMethod.GET, path, null, null);
        assertBadTarget(r, path);
      }
      // the least role: query parameters the routes read
      WebClientSession auditor = WebClientSession.create(client);
      login(auditor);
      for (String path :
          new String[] {
            "/api/grants?tenant=%zz", "/api/audit?q=%2", "/api/audit/export?from=%zz"
          }) {
        assertBadTarget(send(auditor, HttpMethod.GET, path, null, null), path);
      }
      assertEquals(List.of(), suspicious(), "logged by hostile targets");
      // still served when well-formed
      assertEquals(
          200, send(auditor, HttpMethod.GET, "/api/grants?tenant=acme", null, null).statusCode());
    }
  }

  @Test
  void shouldKeepTheControlCharactersOfARequestOutOfTheLog(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClientSession auditor = WebClientSession.create(console.client(vertx));
      String cookie = login(auditor);
      for (String target :
          new String[] {
            // erase the line above and write another in its place (no space: it would end the
            // target)
            "/api/grants?tenant=%zz" + ESC + "[1A" + ESC + "[2K" + ESC + "[32mINFO:admin_logged_in",
            "/api/audit?q=" + ESC + "]0;title" + "\u0007",
            "/api/grants/g-1" + "\u007f",
            "/api/me" + ESC
          }) {
        String answer = raw(console, target, cookie);
        String shown = target.replace(ESC, "<ESC>");
        assertTrue(answer.startsWith("HTTP/1.1 400 "), shown + ": " + answer);
        assertTrue(answer.contains("\"code\":\"bad_request\""), shown + ": " + answer);
      }
      assertEquals(List.of(), suspicious(), "logged by hostile targets");
    }
  }

  private static void assertBadTarget(HttpResponse<Buffer> r, String path) {
    assertEquals(400, r.statusCode(), path + ": " + r.bodyAsString());
    String type = String.valueOf(r.getHeader("Content-Type"));
    assertTrue(type.startsWith("application/json"), path + ": " + type + " " + r.bodyAsString());
    assertError(r, 400, "bad_request");
    assertEquals("DENY", r.getHeader("X-Frame-Options"), path);
    assertEquals("no-store", r.getHeader("Cache-Control"), path);
  }

  /** Logs the auditor in; returns the session cookie as a {@code Cookie} header value. */
  private static String login(WebClientSession s) throws Exception {
    HttpResponse<Buffer> r =
        send(
            s,
            HttpMethod.POST,
            "/api/login",
            new JsonObject()
                .put("user", "auditor")
                .put("password", ConsoleFixture.AUDITOR_PASSWORD),
            null);
    assertEquals(200, r.statusCode(), r.bodyAsString());
    String c =
        r.cookies().stream()
            .filter(x -> x.startsWith(ConsoleSessions.COOKIE + "="))
            .findFirst()
            .orElseThrow();
    return c.substring(0, c.indexOf(';'));
  }

  /**
   * Sends a request line as given, bytes a client library would refuse or escape included, over TLS
   * trusting only the console's CA; returns the whole answer.
   */
  private static String raw(ConsoleFixture console, String target, String cookie)
      throws IOException, GeneralSecurityException {
    try (SSLSocket socket =
        (SSLSocket)
            console.tls().getSocketFactory().createSocket("127.0.0.1", console.server.port())) {
      socket.setSoTimeout(30_000);
      String request =
          "GET "
              + target
              + " HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: "
              + cookie
              + "\r\nConnection: close\r\n\r\n";
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().flush();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }
}
