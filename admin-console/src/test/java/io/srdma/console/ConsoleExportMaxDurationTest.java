package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A slow but steady reader: a logged-in client asks for a large audit export and takes a little of
 * it every {@link #READ_EVERY_MS} ms, far within the write timeout each time, so {@link
 * WriteDeadlines} never cuts it, and the download would take minutes (at the default write timeout
 * and a piece every 50 s: hours), all of it holding a heavy-request place and an open log file. The
 * export's maximum duration (2 s here, 10 min by default) cuts it off: the connection is closed,
 * what the client got is a strict prefix of the export (a download visibly cut short), the place is
 * given back, the cut is counted and logged once, with nothing of the request.
 *
 * <p>Each wait is a bounded poll for its outcome ({@link #WAIT}); the reader is paced (a client on
 * a slow link), never waiting for a time.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class ConsoleExportMaxDurationTest {
  private static final Duration MAX_DURATION = Duration.ofSeconds(2);

  /** Far above the reader's pace: the write timeout is not what cuts it. */
  private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(30);

  /** Bound on each wait: many times the maximum duration, far below the download's length. */
  private static final Duration WAIT = Duration.ofSeconds(20);

  /**
   * About 16 MiB of log: more than the kernel's send buffer (at most 4 MiB by default) and the
   * reader's receive buffer hold, so the export cannot all be handed to the kernel at once.
   */
  private static final int LINES = 80_000;

  private static final String BULK = "bulk";
  private static final int EARLY_LINES = 2_000;
  private static final String EARLY = "early";

  /** The reader takes at most {@link #READ_BYTES} every this many ms: 320 KiB/s, 50 s for all. */
  private static final long READ_EVERY_MS = 50;

  private static final int READ_BYTES = 16 << 10;

  @TempDir Path dir;
  ConsoleFixture console;
  WebClient client;
  String all;
  String early;
  SSLSocket socket;
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final Logger exportLog = (Logger) LoggerFactory.getLogger(AuditExport.class);

  @BeforeEach
  void start(Vertx vertx) throws IOException {
    console =
        new ConsoleFixture(
            dir,
            new ConsoleConfig()
                .responseWriteTimeout(WRITE_TIMEOUT)
                .exportMaxDuration(MAX_DURATION));
    StringBuilder b = new StringBuilder();
    Path file = dir.resolve("audit.log.000000000001");
    try (BufferedWriter w = Files.newBufferedWriter(file, US_ASCII)) {
      for (int seq = 1; seq <= LINES; seq++) {
        String line =
            new JsonObject()
                .put("seq", seq)
                .put("action", "grant")
                .put("outcome", "success")
                .put(
                    "detail",
                    BULK + (seq <= EARLY_LINES ? " " + EARLY + " " : " ") + "d".repeat(150))
                .encode();
        w.write(line);
        w.write('\n');
        b.append(line).append('\n');
        if (seq == EARLY_LINES) {
          early = b.toString();
        }
      }
    }
    all = b.toString();
    client = console.client(vertx);
    logged.start();
    exportLog.addAppender(logged);
  }

  @AfterEach
  void stop() throws IOException {
    exportLog.detachAppender(logged);
    if (socket != null) {
      socket.close();
    }
    console.close();
  }

  private String login(String user, String password) throws Exception {
    HttpResponse<Buffer> r =
        await(
            client
                .post("/api/login")
                .sendJsonObject(new JsonObject().put("user", user).put("password", password)));
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return r.cookies().stream()
        .filter(c -> c.startsWith(ConsoleSessions.COOKIE + "="))
        .map(c -> c.substring(0, c.indexOf(';')))
        .findFirst()
        .orElseThrow();
  }

  private static void awaitCondition(BooleanSupplier condition, String what) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + WAIT + ": " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void shouldCutOffAnExportStillSendingAtItsMaximumDurationHoweverSteadilyItIsRead()
      throws Exception {
    String cookie = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    socket = (SSLSocket) console.tls().getSocketFactory().createSocket();
    socket.setReceiveBufferSize(64 << 10);
    socket.connect(new InetSocketAddress("127.0.0.1", console.server.port()), 5_000);
    socket.setSoTimeout((int) WAIT.toMillis());
    socket.startHandshake();
    socket
        .getOutputStream()
        .write(
            ("GET /api/audit/export?q="
                    + BULK
                    + " HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: "
                    + cookie
                    + "\r\nConnection: close\r\n\r\n")
                .getBytes(US_ASCII));
    socket.getOutputStream().flush();

    awaitCondition(() -> console.server.heavyInFlight() == 1, "the export holds its place");

    // read steadily, a little every READ_EVERY_MS, until the export's place is given back
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    byte[] buf = new byte[READ_BYTES];
    long start = System.nanoTime();
    boolean ended = false;
    while (console.server.heavyInFlight() != 0 && !ended) {
      int n = read(in, buf);
      if (n < 0) {
        ended = true;
      } else {
        got.write(buf, 0, n);
      }
      if (System.nanoTime() - start > WAIT.toNanos()) {
        fail(
            "a steadily read export still held its place after "
                + WAIT
                + " ("
                + got.size()
                + " bytes read)");
      }
      Thread.sleep(READ_EVERY_MS); // the reader's pace, not a wait for something
    }
    // then take what the kernel had taken before the cut, at once: the connection ends
    while (!ended) {
      int n = read(in, buf);
      if (n < 0) {
        ended = true;
      } else {
        got.write(buf, 0, n);
      }
      if (System.nanoTime() - start > 2 * WAIT.toNanos()) {
        fail("the cut-off connection did not end (" + got.size() + " bytes read)");
      }
    }

    String response = got.toString(UTF_8);
    int head = response.indexOf("\r\n\r\n");
    assertTrue(head > 0, "no response head in " + response.length() + " bytes");
    assertTrue(response.startsWith("HTTP/1.1 200 "), response.substring(0, head));
    String body = dechunkedPrefix(response.substring(head + 4));
    assertTrue(body.length() < all.length(), "the whole export was sent: not cut off");
    assertTrue(all.startsWith(body), "what was sent is not the export's beginning");
    assertFalse(response.endsWith("\r\n0\r\n\r\n"), "the cut-short download looks complete");

    HttpResponse<Buffer> again =
        await(client.get("/api/audit/export?q=" + EARLY).putHeader("Cookie", cookie).send());
    assertEquals(200, again.statusCode(), again.bodyAsString());
    assertEquals(early, again.bodyAsString());

    HttpResponse<Buffer> metrics = await(client.get("/metrics").putHeader("Cookie", cookie).send());
    assertEquals(200, metrics.statusCode());
    String text = metrics.bodyAsString();
    assertTrue(text.contains("# HELP srdma_console_export_timeouts_total "), text);
    assertTrue(text.lines().anyMatch("srdma_console_export_timeouts_total 1.0"::equals), text);
    assertTrue(
        text.lines().anyMatch("srdma_console_response_write_timeouts_total 0.0"::equals),
        "the write timeout must not be what cut it: " + text);

    List<ILoggingEvent> events = List.copyOf(logged.list);
    assertEquals(1, events.size(), events.toString());
    ILoggingEvent e = events.get(0);
    assertEquals(Level.INFO, e.getLevel());
    String message = e.getFormattedMessage();
    assertTrue(message.contains(MAX_DURATION.toMillis() + " ms"), message);
    String session = cookie.substring(cookie.indexOf('=') + 1);
    for (String secret : List.of(session, BULK, "auditor", "/api/audit/export")) {
      assertFalse(message.contains(secret), "the log line names '" + secret + "': " + message);
    }
  }

  /** Reads some bytes; -1 at the end of the stream, or when it was closed without TLS's close. */
  private static int read(InputStream in, byte[] buf) throws IOException {
    try {
      return in.read(buf);
    } catch (java.net.SocketTimeoutException e) {
      throw e; // nothing for WAIT: a stall, not an end
    } catch (IOException e) {
      return -1; // closed without TLS's close_notify
    }
  }

  /**
   * The body a chunked transfer cut anywhere carried in whole chunks, and of the last, its part.
   */
  private static String dechunkedPrefix(String chunked) {
    StringBuilder body = new StringBuilder();
    int at = 0;
    while (true) {
      int eol = chunked.indexOf("\r\n", at);
      if (eol < 0) {
        return body.toString();
      }
      int size = Integer.parseInt(chunked.substring(at, eol).trim(), 16);
      if (size == 0) {
        return body.toString();
      }
      int end = Math.min(chunked.length(), eol + 2 + size);
      body.append(chunked, eol + 2, end);
      if (end < eol + 2 + size) {
        return body.toString();
      }
      at = end + 2;
    }
  }
}
