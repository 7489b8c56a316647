package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Operations;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile soft stack that takes receive credits and never acknowledges the host's credit write.
 * An RC send queue completes in order, so every BIND_MW and LOCAL_INV the host posts after that
 * write waits for it (until the transport's retries run out, 4 s): the bind of a GRANT_REQUEST on a
 * shared worker, the invalidation of an expiring grant on the one watchdog thread. Neither may hold
 * a thread another tenant needs.
 */
@Timeout(120)
class UnacknowledgedCreditWriteThreatTest {
  @TempDir Path dir;

  /**
   * The attacker's side: a {@link RawPeer} that takes receive credits and names, as the address the
   * host's queue pair connects to, a responder of its own that never acknowledges anything.
   */
  private static final class Staller implements AutoCloseable {
    final ServerSocket responder;
    final AtomicLong bytesIn = new AtomicLong();
    final Thread acceptor;
    final RawPeer peer;
    final FrameReader reader;
    final ControlProxy proxy;

    Staller(ChannelRig rig, String tenant, String peerName) throws Exception {
      responder = new ServerSocket(0, 4, InetAddress.getByName("127.0.0.1"));
      acceptor =
          new Thread(
              () -> {
                try (Socket s = responder.accept()) {
                  InputStream in = s.getInputStream();
                  OutputStream out = s.getOutputStream();
                  byte[] hello = in.readNBytes(32); // the host QP's HELLO
                  bytesIn.addAndGet(hello.length);
                  // HELLO_ACK: version 1, type 4; then nothing is ever acknowledged
                  out.write(new byte[] {1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
                  out.flush();
                  byte[] b = new byte[4096];
                  int n;
                  while ((n = in.read(b)) >= 0) {
                    bytesIn.addAndGet(n);
                  }
                } catch (Exception e) {
                  // closed
                }
              },
              "stalling-responder");
      acceptor.setDaemon(true);
      acceptor.start();
      byte[] own =
          ByteBuffer.allocate(6)
              .put(new byte[] {127, 0, 0, 1})
              .putShort((short) responder.getLocalPort())
              .array();
      // the host's queue pair connects to the stalling responder; ours sends from its own
      try {
        peer =
            new RawPeer(
                rig,
                tenant,
                peerName,
                Capabilities.RECEIVE_DEPTH | Capabilities.RECEIVE_CREDITS,
                own,
                p -> p.creditWord(0x1000, 0x1234));
      } catch (Exception e) {
        responder.close();
        throw e;
      }
      if (peer.refusal != null) {
        close();
        throw new AssertionError("the host refused the handshake: " + peer.refusal);
      }
      reader = peer.reader;
      proxy = peer.proxy;
    }

    /** One empty WRITE_WITH_IMM: the host reposts its receive and owes a credit (depth 2). */
    void notifyOnce(int imm) throws Exception {
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(7)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .signaled(true)
              .remote(0, 0)
              .immData(imm);
      long before = bytesIn.get();
      peer.qp.postSend(wr);
      WorkCompletion[] wc = {new WorkCompletion()};
      assertEquals(1, peer.cq.await(wc, Duration.ofSeconds(5)), "notification completed");
      assertEquals(WcStatus.SUCCESS, wc[0].status());
      ChannelRig.await(() -> bytesIn.get() > before, "the host's credit write reached us");
    }

    @Override
    public void close() throws Exception {
      try {
        peer.close();
      } finally {
        responder.close();
      }
    }
  }

  private static ChannelRig rig(Path dir) throws Exception {
    // depth 2: a credit falls due at every repost (depth 256 needs 128 records, which a tenant
    // with a WRITE grant seals as easily)
    return new ChannelRig(dir, o -> o.workerThreads(1).receiveDepth(2));
  }

  @Test
  void shouldAnswerAnotherTenantsGrantWhileAPeerLeavesItsCreditWriteUnacknowledged()
      throws Exception {
    try (ChannelRig rig = rig(dir)) {
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      try (Staller attacker = new Staller(rig, "globex", "loader-1")) {
        attacker.notifyOnce(1 << 24);
        // its bind now waits behind the unacknowledged credit write, on the one worker
        attacker.proxy.grantRequest(2, "features", Operations.WRITE, 0, 4096, 60_000);
        Thread.sleep(200);
        long t0 = System.nanoTime();
        acme.grant("kvcache", EnumSet.of(Access.WRITE), 8192, 4096, Duration.ofMinutes(1));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 1500, "another tenant's grant took " + ms + " ms");
      }
    }
  }

  @Test
  void shouldExpireAnotherTenantsGrantOnTimeWhileAPeerLeavesItsCreditWriteUnacknowledged()
      throws Exception {
    try (ChannelRig rig = rig(dir)) {
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      try (Staller attacker = new Staller(rig, "globex", "loader-1")) {
        attacker.proxy.grantRequest(2, "features", Operations.WRITE, 0, 4096, 1_000);
        Frame f = attacker.reader.read().expect(MessageType.GRANT);
        long grantId = f.grant().grantId();
        attacker.notifyOnce((int) (grantId & 0xff) << 24);
        // the attacker's grant expires first: its LOCAL_INV waits on the watchdog thread
        RemoteGrant victim =
            acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMillis(1_500));
        long expiresAt = victim.expiresAt().toEpochMilli();
        ChannelRig.await(
            () -> rig.host.grants().stream().noneMatch(g -> g.tenant().equals("acme")),
            "acme's grant ended");
        long late = System.currentTimeMillis() - expiresAt;
        assertTrue(late < 1000, "acme's grant stayed usable " + late + " ms past its expiry");
      }
    }
  }

  @Test
  void shouldRefuseAnAddressThatKeepsComingBackToLeaveItsCreditWriteUnacknowledged()
      throws Exception {
    // each such session holds a worker for the scoping wait before the host ends it: ended for
    // that, a session costs its address a failure (as one ended for rejected records does), or
    // the attacker reconnects and holds a worker again, for ever
    int limit = 2;
    try (ChannelRig rig =
        new ChannelRig(dir, o -> o.workerThreads(1).receiveDepth(2).authFailuresPerMinute(limit))) {
      for (int i = 0; i < limit; i++) {
        try (Staller attacker = new Staller(rig, "globex", "loader-1")) {
          attacker.notifyOnce(1 << 24);
          attacker.proxy.grantRequest(2, "features", Operations.WRITE, 0, 4096, 60_000);
          // the bind waits behind the unacknowledged credit write until the scoping wait ends
          // the session: its queue pair failed, the grant refused, the session closed
          ChannelRig.await(
              () -> rig.host.sessions().stream().noneMatch(x -> x.tenant().equals("globex")),
              "the host ended stalling session " + i);
        }
      }
      assertEquals(0, rig.host.stats().authFailures(), "it authenticated every time");
      long refused = rig.host.stats().rateLimited();
      assertThrows(Exception.class, () -> new Staller(rig, "globex", "loader-1").close());
      ChannelRig.await(
          () -> rig.host.stats().rateLimited() == refused + 1,
          "the address is refused at accept after " + limit + " stalled sessions");
      assertEquals(
          limit,
          rig.audit().lines().filter(l -> l.contains("did not complete within")).count(),
          "each stalled session audited once");
    }
  }
}
