package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * An error message that echoes a value from the request (a grant id, a host name, the parser's
 * quote of a body) holds no control character: those of the value are written as Java-style escapes
 * (backslash, {@code u}, four hex digits). The message is sent, and logged too (Vert.x logs every
 * failure at DEBUG), so a percent-encoded newline or escape sequence in a grant id cannot forge a
 * log line.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleEchoedValuesTest {
  private static final String FORGED = "09:00:00.000 [main] INFO forged";

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

  @Test
  void shouldEchoNoControlCharacterIntoAnErrorOrTheLog(Vertx vertx) throws Exception {
    try (ConsoleFixture console = new ConsoleFixture(dir)) {
      WebClient client = console.client(vertx);
      // no account: a body the JSON parser quotes
      HttpResponse<Buffer> body =
          await(
              client
                  .post("/api/login")
                  .putHeader("Content-Type", "application/json")
                  .sendBuffer(Buffer.buffer("\u001b[2K\u001b[1A")));
      assertError(body, 400, "bad_json");
      assertPrintable(body);

      WebClientSession admin = WebClientSession.create(client);
      HttpResponse<Buffer> in =
          send(
              admin,
              HttpMethod.POST,
              "/api/login",
              new JsonObject().put("user", "admin").put("password", ConsoleFixture.ADMIN_PASSWORD),
              null);
      String csrf = in.bodyAsJsonObject().getString("csrf");
      // the least role reads, an admin revokes: ids with an encoded newline and escape sequence
      String hostile = "/g-1%0A" + FORGED.replace(" ", "%20") + "%1B%5B2K";
      for (HttpMethod m : new HttpMethod[] {HttpMethod.GET, HttpMethod.DELETE}) {
        HttpResponse<Buffer> r = send(admin, m, "/api/grants" + hostile, null, csrf);
        assertError(r, 404, "not_found");
        assertPrintable(r);
        assertTrue(
            r.bodyAsJsonObject().getString("message").contains("\\u000a" + FORGED),
            "the value is still shown, escaped: " + r.bodyAsString());
      }
      HttpResponse<Buffer> fleet =
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h/x%0A" + "%1B", null, csrf);
      assertEquals(404, fleet.statusCode(), fleet.bodyAsString());
      assertPrintable(fleet);

      List<String> forged =
          List.copyOf(logged.list).stream()
              .map(ConsoleEchoedValuesTest::text)
              .filter(t -> t.contains("\n" + FORGED) || t.contains("\u001b"))
              .toList();
      assertEquals(List.of(), forged, "log lines with a forged line or an escape");
    }
  }

  private static void assertPrintable(HttpResponse<Buffer> r) {
    String message = r.bodyAsJsonObject().getString("message");
    assertFalse(
        message.chars().anyMatch(Character::isISOControl),
        "a control character in: " + message.replace("\u001b", "<ESC>"));
  }

  private static String text(ILoggingEvent e) {
    return e.getFormattedMessage()
        + (e.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(e.getThrowableProxy()));
  }
}
