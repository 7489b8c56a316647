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
 * Red team: grant expiry ran on the host's shared timer, whose expiry task also writes the REVOKE
 * frame to the holder. A peer that stops reading (its connection full) blocks that write until the
 * watchdog closes it after the request timeout — and every other tenant's grant expiry queued on
 * the timer meanwhile waits too, its window still valid: bytes land after the grant expired. The
 * invalidation of an expired grant must not wait on any peer's connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostExpiryBehindStuckPeerTest {
  @TempDir Path dir;
  ChannelRig rig;

  @AfterEach
  void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  @SuppressWarnings("unchecked")
  private HostSession onlySessionOf(String peerName) throws Exception {
    java.lang.reflect.Field f = RegionHost.class.getDeclaredField("sessions");
    f.setAccessible(true);
    for (HostSession s : ((java.util.Map<HostSession, Thread>) f.get(rig.host)).keySet()) {
      if (s.identity() != null && s.identity().endsWith("/" + peerName)) {
        return s;
      }
    }
    throw new AssertionError("no host session of " + peerName);
  }

  @Test
  void aStuckPeersExpiringGrantDoesNotDelayAnotherTenantsExpiry() throws Exception {
    rig = new ChannelRig(dir, o -> o.requestTimeout(ChannelRig.scaled(Duration.ofSeconds(12))));
    SecureRdmaClient globex = rig.client("globex", "loader-1");
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
        // the stuck peer's grant expires first: its REVOKE is the write that blocks
        long stuckTtl = ChannelRig.scaled(Duration.ofSeconds(8)).toMillis();
        long stuckExpiry = System.currentTimeMillis() + stuckTtl;
        proxy.grantRequest(
            2, "kvcache", io.srdma.channel.protocol.Operations.WRITE, 0, 4096, stuckTtl);
        reader.read().expect(MessageType.GRANT);
        // ping without ever reading: the host's PONGs fill the connection
        Thread pinger =
            new Thread(
                () -> {
                  try {
                    for (int i = 0; i < 2_000_000; i++) {
                      proxy.ping(3 + (i & 0xffff), i);
                    }
                  } catch (IOException e) {
                    // the host closed the connection
                  }
                },
                "stuck-peer-pinger");
        pinger.setDaemon(true);
        pinger.start();
        HostSession stuck = onlySessionOf("trainer-1");
        ChannelRig.await(() -> stuck.writeBlockedSince() != 0, "the host's writes to it block");
        long now = System.currentTimeMillis();
        org.junit.jupiter.api.Assumptions.assumeTrue(
            now < stuckExpiry - 1500,
            "the connection filled up too late on this machine to test the overlap");
        // globex's grant expires a second after the stuck peer's
        RemoteGrant g =
            globex.grant(
                "features",
                EnumSet.of(Access.WRITE),
                0,
                4096,
                Duration.ofMillis(stuckExpiry + 1000 - now));
        long expiresAt = g.expiresAt().toEpochMilli();
        ChannelRig.await(
            () -> rig.host.grants().stream().noneMatch(i -> i.grantId() == g.id()),
            "globex's grant ended");
        long late = System.currentTimeMillis() - expiresAt;
        assertTrue(
            late <= ChannelRig.scaled(Duration.ofMillis(1000)).toMillis(),
            "another tenant's expired grant was invalidated " + late + " ms after its expiry");
        pinger.interrupt();
        socket.close();
        pinger.join(ChannelRig.scaled(Duration.ofSeconds(10)).toMillis());
      }
    }
  }
}
