package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
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
import io.srdma.verbs.ConnectionInfo;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * No wait a peer controls holds the host's shared workers, and the deadlines before and during the
 * handshake do not depend on a worker being free. As an attacker with valid certificates: sessions
 * whose HELLO names a responder port that accepts and never answers the soft provider's HELLO, so
 * the host's queue-pair connect (sent at KEY_CONFIRM) stalls until the transport timeout; and, to
 * stand for any busy host, workers held by the test itself. (Found in review: the connect ran on
 * the worker, so {@code workerThreads} such sessions stopped every other tenant's handshake.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostConnectOffWorkersTest {
  @TempDir Path dir;
  ChannelRig rig;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    for (AutoCloseable c : closeables) {
      try {
        c.close();
      } catch (Exception ignored) {
        // best effort
      }
    }
    if (rig != null) {
      rig.close();
    }
  }

  private void start(Consumer<HostOptions> tune) throws Exception {
    rig = new ChannelRig(dir, tune);
  }

  private static HostContext context(RegionHost host) throws Exception {
    Field f = RegionHost.class.getDeclaredField("ctx");
    f.setAccessible(true);
    return (HostContext) f.get(host);
  }

  /** Occupies every worker until {@link #release} (a host too busy to run anyone's strand). */
  private void holdWorkers(int workers) throws Exception {
    CountDownLatch held = new CountDownLatch(workers);
    for (int i = 0; i < workers; i++) {
      context(rig.host)
          .workers()
          .execute(
              () -> {
                held.countDown();
                try {
                  release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
    }
    assertTrue(held.await(5, TimeUnit.SECONDS), "every worker held");
  }

  /** A listener that accepts TCP (in its backlog) and never reads or answers. */
  private ConnectionInfo silentResponder(int qpn) throws Exception {
    ServerSocket silent = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
    closeables.add(silent);
    byte[] address =
        ByteBuffer.allocate(6)
            .put(InetAddress.getByName("127.0.0.1").getAddress())
            .putShort((short) silent.getLocalPort())
            .array();
    return new ConnectionInfo(qpn, 1, address);
  }

  /** An authenticated control connection, nothing sent yet. */
  private final class Attacker {
    final AuthenticatedPeer peer;
    final Socket socket;
    final FrameReader reader;
    final ControlProxy proxy;

    Attacker(String name) throws Exception {
      MutualTls tls = MutualTls.client(rig.credential("acme", name), rig.ca.trust());
      peer = tls.connect(rig.host.address(), ChannelRig.scaled(Duration.ofSeconds(5)));
      socket = peer.socket();
      closeables.add(socket);
      socket.setSoTimeout((int) ChannelRig.scaled(Duration.ofSeconds(20)).toMillis());
      reader = new FrameReader(socket.getInputStream(), Side.SERVER);
      proxy = new ControlProxy(new FrameWriter(socket.getOutputStream()));
    }

    /** HELLO naming {@code responder}, then KEY_CONFIRM: the host's queue pair connects there. */
    void confirmNaming(ConnectionInfo responder) throws Exception {
      try (X25519KeyPair local = X25519KeyPair.generate(new SecureRandom())) {
        proxy.hello(1, 1, 0, local.publicKey(), responder);
        var ack = reader.read().expect(MessageType.HELLO_ACK).helloAck();
        ConnectionInfo hostInfo = ack.connectionInfo();
        try (TlsBinding binding = peer.binding(Role.INITIATOR);
            KeySchedule schedule =
                KeySchedule.builder()
                    .role(Role.INITIATOR)
                    .localKey(local)
                    .peerPublicKey(ack.publicKey())
                    .binding(binding)
                    .sessionId(ack.sessionId())
                    .initiatorQpn(responder.qpn())
                    .responderQpn(hostInfo.qpn())
                    .establish()) {
          proxy.keyConfirm(0, 0, schedule.current().confirmation());
        }
      }
    }

    /** The host's answer to KEY_CONFIRM: must be its ERROR, never its KEY_CONFIRM. */
    ErrorCode refusal() throws Exception {
      Frame f = reader.read();
      assertEquals(MessageType.ERROR, f.type(), "a stalled connect never confirms");
      return f.error().code();
    }
  }

  private void globexIsServed() throws Exception {
    long before = rig.host.stats().recordsOpened();
    SecureRdmaClient c = rig.client("globex", "loader-1");
    RemoteGrant g = c.grant("features", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    g.writeBlocking(0, ChannelRig.bytes(100, 7));
    ChannelRig.await(() -> rig.host.stats().recordsOpened() == before + 1, "globex served");
  }

  @Test
  void shouldServeAnotherTenantWhileAttackersStallTheirConnects() throws Exception {
    int workers = 2;
    start(o -> o.workerThreads(workers).connectThreads(4).maxConnectsPerTenant(2));
    QueuePairConnector connector = context(rig.host).connector();
    List<Attacker> attackers = new ArrayList<>();
    for (int i = 0; i < 3 * workers; i++) {
      Attacker a = new Attacker("mallory-" + i);
      a.confirmNaming(silentResponder(0x123400 + i));
      attackers.add(a);
    }
    // two connects of acme's run (its share), the rest wait for their turn; no worker is held
    ChannelRig.await(
        () -> connector.running("acme") == 2 && connector.waiting() == 4, "attackers connecting");
    long t0 = System.nanoTime();
    globexIsServed();
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertEquals(2, connector.running("acme"), "the attackers still stall theirs");
    assertTrue(
        took.compareTo(ChannelRig.scaled(Duration.ofSeconds(3))) < 0,
        "globex connected and wrote in " + took + ", not behind the attackers' connects");
    for (Attacker a : attackers) {
      ErrorCode code = a.refusal(); // each within its handshake deadline (or transport timeout)
      assertTrue(
          code == ErrorCode.TIMEOUT || code == ErrorCode.INTERNAL_ERROR, "attacker got " + code);
    }
    ChannelRig.await(
        () -> connector.running() == 0 && connector.waiting() == 0, "every connect ended");
    assertEquals(0, rig.host.stats().authFailures(), "no address charged");
    globexIsServed();
  }

  @Test
  void shouldEndAStalledConnectAtTheSessionsHandshakeDeadline() throws Exception {
    // the soft transport timeout is 4 s; the handshake deadline comes first
    start(
        o -> o.handshakeTimeout(Duration.ofMillis(1500)).firstRecordTimeout(Duration.ofSeconds(1)));
    QueuePairConnector connector = context(rig.host).connector();
    Attacker a = new Attacker("mallory-1");
    long t0 = System.nanoTime();
    a.confirmNaming(silentResponder(0x4242));
    assertEquals(ErrorCode.TIMEOUT, a.refusal());
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertTrue(took.compareTo(Duration.ofMillis(3000)) < 0, "ended at its deadline: " + took);
    ChannelRig.await(() -> connector.running() == 0, "the connect's thread is free");
  }

  @Test
  void shouldMoveThePreAuthDeadlineOnTheFirstByteWhileEveryWorkerIsBusy() throws Exception {
    start(
        o ->
            o.workerThreads(2)
                .firstRecordTimeout(Duration.ofMillis(500))
                .handshakeTimeout(ChannelRig.scaled(Duration.ofSeconds(5))));
    holdWorkers(2);
    Thread freer =
        new Thread(
            () -> {
              try {
                Thread.sleep(1500); // well past the first-record deadline
              } catch (InterruptedException ignored) {
                // free them now
              }
              release.countDown();
            },
            "test-free-workers");
    freer.start();
    // its ClientHello arrived in time: the handshake deadline applies, though no worker has run
    // its strand since
    globexIsServed();
    freer.join();
    assertEquals(0, rig.host.stats().handshakeDeadlines());
  }

  @Test
  void shouldNotChargeAnAddressForAHandshakeTheHostWasTooBusyToFinish() throws Exception {
    start(
        o ->
            o.workerThreads(2)
                .authFailuresPerMinute(1)
                .firstRecordTimeout(Duration.ofMillis(500))
                .handshakeTimeout(Duration.ofSeconds(1)));
    holdWorkers(2);
    SecureRdmaClient[] got = new SecureRdmaClient[1];
    ChannelException e =
        assertThrows(
            ChannelException.class, () -> got[0] = rig.client("globex", "loader-1"), "no worker");
    assertEquals(ChannelException.Reason.CONNECT_FAILED, e.reason(), e.toString());
    ChannelRig.await(() -> rig.host.stats().handshakeDeadlines() == 1, "closed at its deadline");
    release.countDown();
    assertEquals(0, rig.host.stats().authFailures(), "the host was the slow party");
    globexIsServed(); // not refused at accept: one failure would have blocked 127.0.0.1
    assertEquals(0, rig.host.stats().rateLimited());
  }

  @Test
  void shouldNotServeAHelloTheStrandReachesAfterTheDeadline() throws Exception {
    start(
        o ->
            o.workerThreads(2)
                .firstRecordTimeout(Duration.ofMillis(500))
                .handshakeTimeout(Duration.ofSeconds(1)));
    Attacker a = new Attacker("trainer-1");
    HostContext ctx = context(rig.host);
    ChannelRig.await(
        () -> ctx.tables().sessions.keySet().stream().anyMatch(s -> s.certificate() != null),
        "authenticated by the host");
    holdWorkers(2);
    a.proxy.hello(1, 1, 0, new byte[32], silentResponder(0x77));
    Thread.sleep(1500); // past the session handshake's deadline, the HELLO buffered
    release.countDown();
    Frame f = a.reader.read();
    assertEquals(
        MessageType.ERROR, f.type(), "no HELLO_ACK (and no queue pair) after the deadline");
    assertEquals(ErrorCode.TIMEOUT, f.error().code());
    assertFalse(ctx.tables().sessions.keySet().stream().anyMatch(s -> s.qp != null));
  }
}
