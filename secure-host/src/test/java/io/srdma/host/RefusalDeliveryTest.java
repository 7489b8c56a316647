package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.ChannelException;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.keys.MutualTls;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host that refuses a session (quota, rate limit) sends its ERROR and closes at once, without
 * reading the HELLO the client sent meanwhile: the connection is reset under the client, possibly
 * before its HELLO is written. The client reports the host's reason, never a bare connection
 * failure (a CI run of the attack suite once saw CONNECT_FAILED where QUOTA_EXCEEDED was due).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RefusalDeliveryTest {
  private static final int CONNECTIONS = 40;

  @TempDir Path dir;
  private ChannelRig rig;

  @BeforeEach
  void start() throws Exception {
    rig = new ChannelRig(dir);
  }

  @AfterEach
  void stop() {
    rig.close();
  }

  @Test
  void shouldReportTheHostsRefusalWhenTheHostResetsTheConnection() throws Exception {
    MutualTls fake =
        MutualTls.server(rig.credential(RegionHost.HOST_TENANT, "host-1"), rig.ca.trust());
    AtomicInteger refused = new AtomicInteger();
    try (SSLServerSocket listener =
        fake.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8)) {
      Thread t =
          new Thread(
              () -> {
                for (int i = 0; i < CONNECTIONS; i++) {
                  try (SSLSocket s = (SSLSocket) listener.accept()) {
                    fake.handshake(s, Duration.ofSeconds(10));
                    if (i % 2 == 1) {
                      // the HELLO is here, unread: the reset comes after the client waits
                      InputStream in = s.getInputStream();
                      in.read();
                    }
                    new ControlProxy(new FrameWriter(s.getOutputStream()))
                        .error(0, ErrorCode.QUOTA_EXCEEDED, "session quota of tenant acme reached");
                    s.getOutputStream().flush();
                    s.setSoLinger(true, 0); // close with a reset, as a host with unread input does
                    refused.incrementAndGet();
                  } catch (Exception ex) {
                    // the client's failure is what the test checks
                  }
                }
              },
              "refusing-host");
      t.setDaemon(true);
      t.start();
      InetSocketAddress at =
          new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
      for (int i = 0; i < CONNECTIONS; i++) {
        ChannelException e =
            assertThrows(
                ChannelException.class,
                () -> SecureRdmaClient.connect(rig.options("acme", "trainer-1").host(at)));
        int attempt = i;
        assertEquals(
            ChannelException.Reason.QUOTA_EXCEEDED,
            e.reason(),
            () -> "connection " + attempt + ": " + e.getMessage());
        assertTrue(e.getMessage().contains("session quota of tenant acme reached"), e.getMessage());
      }
      t.join(10_000);
      assertEquals(CONNECTIONS, refused.get(), "the fake host refused every connection");
    }
  }
}
