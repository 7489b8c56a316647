package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.KeyExchangeException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK's connect on the shared event loop fails as documented: refused, silent and non-TLS
 * servers give {@code CONNECT_FAILED} with the key exchange's reason as detail, within the connect
 * timeout.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClientConnectFailuresTest {
  @TempDir Path dir;

  private static ChannelException connect(ClientOptions o) {
    return assertThrows(ChannelException.class, () -> SecureRdmaClient.connect(o).close());
  }

  @Test
  void shouldReportRefusedSilentAndNonTlsServers() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      InetSocketAddress closed;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        closed = new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
      }
      ChannelException refused = connect(rig.options("acme", "trainer-1").host(closed));
      assertEquals(ChannelException.Reason.CONNECT_FAILED, refused.reason());
      assertEquals(
          KeyExchangeException.Reason.HANDSHAKE_FAILED.name(),
          refused.detail(),
          refused.getMessage());

      try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
        ClientOptions o =
            rig.options("acme", "trainer-1")
                .host((InetSocketAddress) silent.getLocalSocketAddress())
                .connectTimeout(Duration.ofMillis(500));
        long start = System.nanoTime();
        ChannelException timedOut = connect(o);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertEquals(ChannelException.Reason.CONNECT_FAILED, timedOut.reason());
        assertEquals(
            KeyExchangeException.Reason.HANDSHAKE_TIMEOUT.name(),
            timedOut.detail(),
            timedOut.getMessage());
        assertTrue(took.compareTo(ChannelRig.scaled(Duration.ofSeconds(3))) < 0, "took " + took);
      }

      try (ServerSocket http = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
        Thread answer =
            new Thread(
                () -> {
                  try (Socket s = http.accept();
                      OutputStream out = s.getOutputStream()) {
                    out.write(
                        "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    Thread.sleep(2_000);
                  } catch (Exception ignored) {
                    // the client went away
                  }
                });
        answer.setDaemon(true);
        answer.start();
        ClientOptions o =
            rig.options("acme", "trainer-1")
                .host((InetSocketAddress) http.getLocalSocketAddress())
                .connectTimeout(ChannelRig.scaled(Duration.ofSeconds(5)));
        long start = System.nanoTime();
        ChannelException notTls = connect(o);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertEquals(ChannelException.Reason.CONNECT_FAILED, notTls.reason());
        assertEquals(
            KeyExchangeException.Reason.HANDSHAKE_FAILED.name(),
            notTls.detail(),
            notTls.getMessage());
        // refused as soon as the answer arrived, not at the deadline
        assertTrue(took.compareTo(ChannelRig.scaled(Duration.ofSeconds(2))) < 0, "took " + took);
        answer.join(5_000);
      }

      // and the next client still connects through the same shared loop
      SecureRdmaClient ok = rig.client("acme", "trainer-2");
      assertTrue(ok.isOpen());
    }
  }
}
