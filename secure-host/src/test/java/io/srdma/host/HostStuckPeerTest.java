package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.protocol.ControlProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A peer that completes its session handshake, then sends PINGs and never reads the PONGs: the
 * host's writes to it block on a full connection (a socket write has no timeout). The watchdog
 * closes that connection after the request timeout, so no host thread waits on it forever, and
 * other tenants are served meanwhile.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostStuckPeerTest {
  @TempDir Path dir;
  ChannelRig rig;

  @AfterEach
  void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  @Test
  void aPeerThatStopsReadingIsClosedAfterTheRequestTimeout() throws Exception {
    rig = new ChannelRig(dir, o -> o.requestTimeout(ChannelRig.scaled(Duration.ofSeconds(1))));
    try (RawPeer raw = new RawPeer(rig, "acme", "trainer-1")) {
      Socket socket = raw.socket;
      ControlProxy proxy = raw.proxy;
      ChannelRig.await(() -> rig.host.sessions().size() == 1, "session established");

      // ping without ever reading: the host's PONGs fill the connection until its writes block
      OutputStream out = socket.getOutputStream();
      Thread pinger =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 2_000_000; i++) {
                    proxy.ping(2 + (i & 0xffff), i);
                  }
                } catch (IOException e) {
                  // the host closed the connection: expected
                }
              },
              "stuck-peer-pinger");
      pinger.setDaemon(true);
      pinger.start();
      ChannelRig.await(
          () -> rig.host.sessions().isEmpty(), "the host closed the session that stopped reading");
      pinger.join(ChannelRig.scaled(Duration.ofSeconds(10)).toMillis());
      assertTrue(!pinger.isAlive(), "the peer's writes fail: the connection is closed");
      out.close();
    }
    // the host still serves (its timer and session threads are not stuck)
    SecureRdmaClient c = rig.client("globex", "loader-1");
    RemoteGrant g = c.grant("features", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(1));
    ChannelRig.await(() -> "EXPIRED".equals(g.endedBecause()), "expiry still pushed by the timer");
  }
}
