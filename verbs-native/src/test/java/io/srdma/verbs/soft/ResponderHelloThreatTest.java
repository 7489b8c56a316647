package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An unauthenticated stranger on the soft responder's port who knows (or guessed, with the
 * HELLO_NAK oracle) a queue pair's number must not be able to take that queue pair's one responder
 * slot before its real peer connects, nor fail it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResponderHelloThreatTest {
  private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

  private static InetSocketAddress responderOf(VerbsTestRig rig) {
    return ((SoftDeviceContext) rig.ctxB).responderAddress();
  }

  private static ByteBuffer hello(int srcQpn, int psn, int dstQpn) {
    ByteBuffer hello = ByteBuffer.allocate(RequestFlyweight.LENGTH);
    new RequestFlyweight()
        .wrap(hello, 0)
        .encode(
            RequestFlyweight.OP_HELLO,
            (byte) 0,
            psn,
            0,
            srcQpn,
            RequestFlyweight.HELLO_MAGIC,
            dstQpn);
    return hello;
  }

  @Test
  void shouldNotLetAStrangersHelloSquatOnAQueuePairBeforeItsPeerConnects() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      CompletionQueue cqX = rig.track(rig.ctxA.createCompletionQueue(16));
      CompletionQueue cqV = rig.track(rig.ctxB.createCompletionQueue(16));
      QueuePair x = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqX, 4, 1)));
      SoftQueuePair victim =
          (SoftQueuePair) rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 4, 1)));
      x.init(AccessFlags.REMOTE_WRITE);
      victim.init(AccessFlags.REMOTE_WRITE);
      // The host's QP sits in INIT while its QPN travels to the peer over TLS: a stranger who
      // knows the QPN (not the peer's QPN or PSN) says HELLO first.
      try (SocketChannel stranger = SocketChannel.open(responderOf(rig))) {
        stranger.write(hello(0x123456, 0x77, victim.qpn()));
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // it is taken in
        victim.readyToReceive(x.localInfo());
        x.readyToReceive(victim.localInfo());
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // the responder sees RTR
        assertNotEquals(QpState.ERROR, victim.state(), "a stranger's HELLO failed the QP");
        assertDoesNotThrow(victim::readyToSend);
        assertDoesNotThrow(
            x::readyToSend, "the real peer was refused: the stranger holds the slot");
        MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = rig.register(rig.pdB, 64, RW);
        VerbsTestRig.fill(src, 5);
        rig.write(x, 7, src, 0, 64, dst.address(), dst.rkey());
        rig.expect(cqX, WcStatus.SUCCESS, 7);
        assertEquals(src.buffer(), dst.buffer());
      }
    }
  }

  @Test
  void shouldAnswerAStrangersHelloToAConnectedQueuePairAsIfItDidNotExist() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      byte[] unknown = answerTo(rig, hello(0x123456, 0x77, rig.qpB.qpn() ^ 0x5A5A5A));
      byte[] connected = answerTo(rig, hello(0x123456, 0x77, rig.qpB.qpn()));
      // a scanner must not learn which QPNs are live from the answer
      assertEquals(ResponseFlyweight.TYPE_HELLO_NAK, connected[ResponseFlyweight.TYPE_OFFSET]);
      assertEquals(
          unknown[ResponseFlyweight.SYNDROME_OFFSET], connected[ResponseFlyweight.SYNDROME_OFFSET]);
      assertEquals(QpState.RTS, rig.qpB.state());
    }
  }

  private static byte[] answerTo(VerbsTestRig rig, ByteBuffer hello) throws IOException {
    try (SocketChannel ch = SocketChannel.open(responderOf(rig))) {
      ch.write(hello);
      ByteBuffer answer = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
      while (answer.hasRemaining() && ch.read(answer) >= 0) {
        // the whole answer
      }
      return answer.array();
    }
  }
}
