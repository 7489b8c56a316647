package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An anonymous client that opens connection after connection and sends half a request on each
 * (slowloris) must not hold without bound sockets and memory of the process the console shares with
 * the RDMA host: the console keeps at most {@link ConsoleVerticle#MAX_CONNECTIONS_PER_ADDRESS}
 * connections of one client address and closes the others at once.
 */
class ConsoleConnectionLimitTest {
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

  /** Whether the server closed the socket (end of stream or reset) rather than keeping it. */
  private static boolean closedByServer(SSLSocket s) throws IOException {
    s.setSoTimeout(20);
    try {
      InputStream in = s.getInputStream();
      return in.read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  @Test
  void shouldCloseConnectionsOfOneAddressBeyondItsLimit() throws Exception {
    SSLContext tls = console.tls();
    int tries = ConsoleVerticle.MAX_CONNECTIONS_PER_ADDRESS * 3;
    List<SSLSocket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < tries; i++) {
        SSLSocket s =
            (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", console.server.port());
        s.startHandshake();
        // half a request: the headers never end
        s.getOutputStream()
            .write(
                "GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        sockets.add(s);
      }
      Thread.sleep(500);
      int open = 0;
      for (SSLSocket s : sockets) {
        if (!closedByServer(s)) {
          open++;
        }
      }
      assertTrue(
          open <= ConsoleVerticle.MAX_CONNECTIONS_PER_ADDRESS,
          open + " of " + tries + " half-sent connections of one address still open");
    } finally {
      for (SSLSocket s : sockets) {
        s.close();
      }
    }
    // the address's connections closed, it is served again
    Thread.sleep(300);
    try (SSLSocket s =
        (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", console.server.port())) {
      s.getOutputStream()
          .write(
              "GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      String status = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      assertEquals("HTTP/1.1 401", status);
    }
  }
}
