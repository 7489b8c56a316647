package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slowloris on the response side: a logged-in client asks for an audit export and then takes none
 * of it (a tiny receive buffer it never reads: its TCP window at zero), while sending a byte of a
 * next request now and then so the idle timeout never fires. Without a deadline on sending, each
 * such export holds a heavy-request place (and its open log file and a chunk of memory) for ever;
 * four of them take all of their user's places. The console's write timeout (2 s here, 60 s by
 * default) closes each connection and gives the places back. A client that reads steadily gets its
 * whole export however many write timeouts the download takes.
 *
 * <p>Each wait is a bounded poll for its outcome ({@link #WAIT}, far below the 60 s idle timeout),
 * never a wait for a time; the reading client is paced (a client on a link of that speed).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class ConsoleWriteDeadlineTest {
  private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(2);

  /** Bound on each wait: many write timeouts, far below the 60 s idle timeout. */
  private static final Duration WAIT = Duration.ofSeconds(20);

  /**
   * About 16 MiB of log: far more than the console's send buffer, the kernel's (at most 4 MiB by
   * default) and a stalled client's receive buffer hold, so an export of it must stall.
   */
  private static final int LINES = 80_000;

  /** Every line's detail has this: an export filtered by it is the whole file. */
  private static final String BULK = "bulk";

  /** The first lines' details also have {@link #EARLY}: an export of only those is small. */
  private static final int EARLY_LINES = 2_000;

  private static final String EARLY = "early";

  /**
   * Bytes a second the reading client takes. On loopback the kernel's send buffer grows to 4 MiB at
   * once, and the console may write more only each time a third of it has drained: about every 0.6
   * s at this rate, well within the write timeout. The download takes over four timeouts.
   */
  private static final int READ_RATE = 2 << 20;

  /** A stalled client's receive buffer: the kernel's smallest, about. */
  private static final int TINY_RECEIVE_BUFFER = 4096;

  private static final long TRICKLE_MS = 100;

  @TempDir Path dir;
  ConsoleFixture console;
  WebClient client;
  String all;
  String early;
  final List<SSLSocket> sockets = new ArrayList<>();

  @BeforeEach
  void start(Vertx vertx) throws IOException {
    console = new ConsoleFixture(dir, new ConsoleConfig().responseWriteTimeout(WRITE_TIMEOUT));
    // a rotated file beside the active log, put there once the log is open
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
  }

  @AfterEach
  void stop() throws IOException {
    for (SSLSocket s : sockets) {
      s.close();
    }
    console.close();
  }

  /** A new login session of a user: its cookie ({@code name=value}). */
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

  private String auditor() throws Exception {
    return login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
  }

  /** A raw TLS connection whose receive buffer is set before it connects (the window it offers). */
  private SSLSocket connect(int receiveBuffer) throws Exception {
    SSLSocket s = (SSLSocket) console.tls().getSocketFactory().createSocket();
    sockets.add(s);
    s.setReceiveBufferSize(receiveBuffer);
    s.connect(new InetSocketAddress("127.0.0.1", console.server.port()), 5_000);
    s.setSoTimeout((int) WAIT.toMillis());
    s.startHandshake();
    return s;
  }

  private static void get(SSLSocket s, String target, String cookie, boolean close)
      throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(
        ("GET "
                + target
                + " HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: "
                + cookie
                + (close ? "\r\nConnection: close" : "")
                + "\r\n\r\n")
            .getBytes(US_ASCII));
    out.flush();
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
  void shouldCutOffExportsWhoseClientTakesNothingAndGiveTheirPlacesBack() throws Exception {
    // one auditor, two sessions, two exports each: all four of the user's heavy places
    List<SSLSocket> stalled = new ArrayList<>();
    for (int session = 0; session < 2; session++) {
      String cookie = auditor();
      for (int i = 0; i < HeavyWork.MAX_PER_SESSION; i++) {
        SSLSocket s = connect(TINY_RECEIVE_BUFFER);
        get(s, "/api/audit/export", cookie, false);
        stalled.add(s);
      }
    }
    awaitCondition(
        () -> console.server.heavyInFlight() == HeavyWork.MAX_PER_USER,
        "the four exports hold their user's places");

    // each client reads nothing, and sends a byte of a next request's header every TRICKLE_MS:
    // the connection is never idle. Cut off: a byte it sends is refused (the console's side is
    // gone)
    long deadline = System.nanoTime() + WAIT.toNanos();
    List<SSLSocket> open = new ArrayList<>(stalled);
    for (SSLSocket s : open) {
      s.getOutputStream().write("GET /api/me HTTP/1.1\r\nX-Pad: ".getBytes(US_ASCII));
    }
    while (!open.isEmpty()) {
      if (System.nanoTime() > deadline) {
        fail(
            open.size()
                + " exports their clients took nothing of are still sending after "
                + WAIT
                + "; heavy places held: "
                + console.server.heavyInFlight());
      }
      for (SSLSocket s : new ArrayList<>(open)) {
        try {
          s.getOutputStream().write('a');
          s.getOutputStream().flush();
        } catch (IOException cut) {
          open.remove(s);
        }
      }
      Thread.sleep(TRICKLE_MS);
    }
    awaitCondition(() -> console.server.heavyInFlight() == 0, "the exports' places given back");

    // the places are usable again: by the same user (all four were held) and by another
    HttpResponse<Buffer> again = exportEarly(auditor());
    assertEquals(200, again.statusCode(), again.bodyAsString());
    assertEquals(early, again.bodyAsString());
    HttpResponse<Buffer> other = exportEarly(login("admin", ConsoleFixture.ADMIN_PASSWORD));
    assertEquals(200, other.statusCode(), other.bodyAsString());
    assertEquals(early, other.bodyAsString());

    // counted, without anything of the requests
    String cookie = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    HttpResponse<Buffer> metrics = await(client.get("/metrics").putHeader("Cookie", cookie).send());
    assertEquals(200, metrics.statusCode());
    assertTrue(
        metrics
            .bodyAsString()
            .contains("srdma_console_response_write_timeouts_total " + stalled.size() + ".0"),
        metrics.bodyAsString());
  }

  private HttpResponse<Buffer> exportEarly(String cookie) throws Exception {
    return await(client.get("/api/audit/export?q=" + EARLY).putHeader("Cookie", cookie).send());
  }

  @Test
  void shouldSendAWholeExportToAClientThatReadsSteadilyForManyTimeouts() throws Exception {
    String cookie = auditor();
    SSLSocket s = connect(64 << 10);
    get(s, "/api/audit/export?q=" + BULK, cookie, true);
    InputStream in = s.getInputStream();
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    byte[] buf = new byte[16 << 10];
    long start = System.nanoTime();
    int n;
    while ((n = in.read(buf)) >= 0) {
      got.write(buf, 0, n);
      if (System.nanoTime() - start > WAIT.toNanos()) {
        fail("the export did not end within " + WAIT + " (" + got.size() + " bytes read)");
      }
      long ahead = start + got.size() * 1_000_000_000L / READ_RATE - System.nanoTime();
      if (ahead > 0) {
        TimeUnit.NANOSECONDS.sleep(ahead); // the pace, not a wait for something
      }
    }
    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    System.out.printf("the reading client took %d bytes in %d ms%n", got.size(), took);
    assertTrue(took > 3 * WRITE_TIMEOUT.toMillis(), "the download took " + took + " ms");
    String response = got.toString(UTF_8);
    int head = response.indexOf("\r\n\r\n");
    assertTrue(head > 0, "no response head in " + response.length() + " bytes");
    assertTrue(response.startsWith("HTTP/1.1 200 "), response.substring(0, head));
    assertTrue(
        response.substring(0, head).toLowerCase().contains("transfer-encoding: chunked"),
        response.substring(0, head));
    assertEquals(all, dechunk(response.substring(head + 4)));
    assertEquals(0, console.server.heavyInFlight());
  }

  /** The body of a chunked transfer (ASCII content: characters are bytes). */
  private static String dechunk(String chunked) {
    StringBuilder body = new StringBuilder();
    int at = 0;
    while (true) {
      int eol = chunked.indexOf("\r\n", at);
      assertTrue(eol > 0, "a chunk size line");
      int size = Integer.parseInt(chunked.substring(at, eol).trim(), 16);
      if (size == 0) {
        return body.toString();
      }
      assertTrue(
          eol + 2 + size <= chunked.length(),
          "the response was cut short after " + body.length() + " bytes of its body");
      body.append(chunked, eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
  }
}
