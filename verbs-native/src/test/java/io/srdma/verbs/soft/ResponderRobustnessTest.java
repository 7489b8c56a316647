package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QpState;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Hostile bytes on the soft responder's port drop that connection only. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResponderRobustnessTest {
  private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

  private static InetSocketAddress responderOf(VerbsTestRig rig) {
    return ((SoftDeviceContext) rig.ctxB).responderAddress();
  }

  /** Reads until the responder closes the connection; true if it did within the test timeout. */
  private static boolean droppedByResponder(SocketChannel ch) throws IOException {
    ByteBuffer sink = ByteBuffer.allocate(256);
    while (true) {
      sink.clear();
      if (ch.read(sink) < 0) {
        return true;
      }
    }
  }

  private static void assertStillServing(VerbsTestRig rig) {
    MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
    MemoryRegion dst = rig.register(rig.pdB, 64, RW);
    VerbsTestRig.fill(src, 8);
    rig.write(rig.qpA, 99, src, 0, 64, dst.address(), dst.rkey());
    rig.expect(rig.cqA, WcStatus.SUCCESS, 99);
    assertEquals(src.buffer(), dst.buffer());
  }

  @Test
  void shouldDropAConnectionSendingGarbageAndKeepServing() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open();
        SocketChannel attacker = SocketChannel.open(responderOf(rig))) {
      byte[] garbage = new byte[4096];
      new SecureRandom().nextBytes(garbage);
      attacker.write(ByteBuffer.wrap(garbage));
      assertTrue(droppedByResponder(attacker));
      assertStillServing(rig);
    }
  }

  @Test
  void shouldDropAHelloForAQueuePairThatIsAlreadyConnected() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open();
        SocketChannel attacker = SocketChannel.open(responderOf(rig))) {
      ByteBuffer hello = ByteBuffer.allocate(RequestFlyweight.LENGTH);
      new RequestFlyweight()
          .wrap(hello, 0)
          .encode(
              RequestFlyweight.OP_HELLO,
              (byte) 0,
              rig.qpA.localInfo().psn(),
              0,
              rig.qpA.qpn(),
              RequestFlyweight.HELLO_MAGIC,
              rig.qpB.qpn());
      attacker.write(hello);
      ByteBuffer answer = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
      while (answer.hasRemaining() && attacker.read(answer) >= 0) {
        // read the whole answer
      }
      assertEquals(
          ResponseFlyweight.TYPE_HELLO_NAK, new ResponseFlyweight().wrap(answer, 0).type());
      assertTrue(droppedByResponder(attacker));
      assertStillServing(rig);
    }
  }

  @Test
  void shouldDropAnOversizedFrameAndFailOnlyThatQueuePair() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      // A second, fresh pair of QPs whose connection the "peer" (this test) drives by hand.
      var cq = rig.track(rig.ctxB.createCompletionQueue(16));
      SoftQueuePair victim =
          (SoftQueuePair)
              rig.track(rig.pdB.createQueuePair(io.srdma.verbs.QueuePairAttributes.of(cq, 4, 1)));
      victim.init(AccessFlags.REMOTE_WRITE);
      int fakeQpn = 0x424242;
      int fakePsn = 0x10;
      victim.readyToReceive(
          new io.srdma.verbs.ConnectionInfo(fakeQpn, fakePsn, rig.qpA.localInfo().address()));
      try (SocketChannel peer = SocketChannel.open(responderOf(rig))) {
        ByteBuffer frame = ByteBuffer.allocate(2 * RequestFlyweight.LENGTH);
        RequestFlyweight f = new RequestFlyweight();
        f.wrap(frame, 0)
            .encode(
                RequestFlyweight.OP_HELLO,
                (byte) 0,
                fakePsn,
                0,
                fakeQpn,
                RequestFlyweight.HELLO_MAGIC,
                victim.qpn());
        f.wrap(frame, RequestFlyweight.LENGTH)
            .encode(RequestFlyweight.OP_WRITE, (byte) 0, fakePsn, Integer.MAX_VALUE, 0, 0, 1);
        peer.write(frame);
        assertTrue(droppedByResponder(peer));
      }
      VerbsTestRig.awaitState(victim, QpState.ERROR);
      assertEquals(QpState.RTS, rig.qpB.state());
      assertStillServing(rig);
    }
  }

  @Test
  void shouldRefuseConnectionsBeyondThePendingHandshakeLimitAndKeepServing() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      java.util.List<SocketChannel> flood = new java.util.ArrayList<>();
      try {
        int extra = 20;
        for (int i = 0; i < SoftDeviceContext.MAX_PENDING_HANDSHAKES + extra; i++) {
          flood.add(SocketChannel.open(responderOf(rig)));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        SoftDeviceContext ctx = (SoftDeviceContext) rig.ctxB;
        while (ctx.refusedConnections() < extra && System.nanoTime() < deadline) {
          java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        assertEquals(
            extra, ctx.refusedConnections(), "connections beyond the limit are closed unheard");
      } finally {
        for (SocketChannel ch : flood) {
          ch.close();
        }
      }
      assertStillServing(rig);
    }
  }
}
