package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Side;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.MutualTls;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.security.SecureRandom;
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
    try (DeviceContext context =
            RdmaProviders.firstDevice(ChannelRig.PROVIDER).open(new DeviceOptions());
        ProtectionDomain pd = context.allocateProtectionDomain();
        CompletionQueue cq = context.createCompletionQueue(16);
        QueuePair qp = pd.createQueuePair(new QueuePairAttributes(cq, cq, 4, 1, 1, 1))) {
      qp.init(0);
      MutualTls tls = MutualTls.client(rig.credential("acme", "trainer-1"), rig.ca.trust());
      AuthenticatedPeer peer =
          tls.connect(rig.host.address(), ChannelRig.scaled(Duration.ofSeconds(5)));
      try (Socket socket = peer.socket()) {
        socket.setSoTimeout((int) ChannelRig.scaled(Duration.ofSeconds(5)).toMillis());
        FrameReader reader = new FrameReader(socket.getInputStream(), Side.SERVER);
        ControlProxy proxy = new ControlProxy(new FrameWriter(socket.getOutputStream()));
        SecureRandom random = new SecureRandom();
        try (X25519KeyPair local = X25519KeyPair.generate(random)) {
          proxy.hello(1, 1, 0, local.publicKey(), qp.localInfo());
          Frame ackFrame = reader.read();
          var ack = ackFrame.expect(MessageType.HELLO_ACK).helloAck();
          // the reader reuses its buffer: copy what the next read would overwrite
          io.srdma.verbs.ConnectionInfo hostInfo = ack.connectionInfo();
          try (TlsBinding binding = peer.binding(Role.INITIATOR);
              KeySchedule schedule =
                  KeySchedule.builder()
                      .role(Role.INITIATOR)
                      .localKey(local)
                      .peerPublicKey(ack.publicKey())
                      .binding(binding)
                      .sessionId(ack.sessionId())
                      .initiatorQpn(qp.qpn())
                      .responderQpn(hostInfo.qpn())
                      .establish()) {
            proxy.keyConfirm(0, 0, schedule.current().confirmation());
            reader.read().expect(MessageType.KEY_CONFIRM);
            qp.readyToReceive(hostInfo);
            qp.readyToSend();
          }
        }
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
            () -> rig.host.sessions().isEmpty(),
            "the host closed the session that stopped reading");
        pinger.join(ChannelRig.scaled(Duration.ofSeconds(10)).toMillis());
        assertTrue(!pinger.isAlive(), "the peer's writes fail: the connection is closed");
        out.close();
      }
    }
    // the host still serves (its timer and session threads are not stuck)
    SecureRdmaClient c = rig.client("globex", "loader-1");
    RemoteGrant g = c.grant("features", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(1));
    ChannelRig.await(() -> "EXPIRED".equals(g.endedBecause()), "expiry still pushed by the timer");
  }
}
