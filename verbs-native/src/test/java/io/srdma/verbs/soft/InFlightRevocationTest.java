package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A WRITE whose header passed the R_Key check before the key was invalidated places no byte after
 * the invalidation returned, and a payload that stalls is NAKed: a raw requester (this test) feeds
 * the payload by hand, so "mid-way" is exact.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InFlightRevocationTest {
  private static final int SIZE = 1 << 20;
  private static final int HALF = SIZE / 2;
  private static final int OWNER_MR =
      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.MW_BIND;

  /**
   * A victim QP on the rig's device B in RTS (its requester talks to a QP C on device A that never
   * connects back), and a raw socket speaking for C to B's responder.
   */
  private static final class RawPeer implements AutoCloseable {
    final CompletionQueue cqC;
    final CompletionQueue cqV;
    final QueuePair qpC;
    final QueuePair victim;
    final SocketChannel socket;
    private final RequestFlyweight request = new RequestFlyweight();
    private int psn;

    RawPeer(VerbsTestRig rig) throws IOException {
      cqC = rig.track(rig.ctxA.createCompletionQueue(16));
      cqV = rig.track(rig.ctxB.createCompletionQueue(16));
      qpC = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqC, 4, 1)));
      victim = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 4, 1)));
      qpC.init(AccessFlags.REMOTE_WRITE);
      victim.init(AccessFlags.REMOTE_WRITE);
      qpC.readyToReceive(victim.localInfo());
      victim.readyToReceive(qpC.localInfo());
      victim.readyToSend();
      psn = qpC.localInfo().psn();
      socket = SocketChannel.open(((SoftDeviceContext) rig.ctxB).responderAddress());
      ByteBuffer hello = ByteBuffer.allocate(RequestFlyweight.LENGTH);
      request
          .wrap(hello, 0)
          .encode(
              RequestFlyweight.OP_HELLO,
              (byte) 0,
              psn,
              0,
              qpC.qpn(),
              RequestFlyweight.HELLO_MAGIC,
              victim.qpn());
      writeAll(hello);
      assertEquals(ResponseFlyweight.TYPE_HELLO_ACK, readResponse().type());
    }

    void writeHeader(long address, int rkey, int length) throws IOException {
      writeHeaderWith(address, rkey, length, ByteBuffer.allocate(0));
    }

    /** A WRITE header and the first bytes of its payload, in one socket write. */
    void writeHeaderWith(long address, int rkey, int length, ByteBuffer first) throws IOException {
      ByteBuffer b = ByteBuffer.allocate(RequestFlyweight.LENGTH + first.remaining());
      request
          .wrap(b, 0)
          .encode(
              RequestFlyweight.OP_WRITE,
              RequestFlyweight.FLAG_ACK_REQ,
              psn,
              length,
              0,
              address,
              rkey);
      psn = (psn + 1) & 0xFFFFFF;
      b.position(RequestFlyweight.LENGTH).put(first).flip();
      writeAll(b);
    }

    void writeAll(ByteBuffer b) throws IOException {
      while (b.hasRemaining()) {
        socket.write(b);
      }
    }

    ResponseFlyweight readResponse() throws IOException {
      ByteBuffer answer = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
      while (answer.hasRemaining()) {
        if (socket.read(answer) < 0) {
          throw new EOFException("responder closed before answering");
        }
      }
      return new ResponseFlyweight().wrap(answer, 0);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  /** Non-zero payload bytes: {@code i % 251 + 1}. */
  private static ByteBuffer payload(int from, int to) {
    ByteBuffer b = ByteBuffer.allocate(to - from);
    for (int i = from; i < to; i++) {
      b.put((byte) (i % 251 + 1));
    }
    return b.flip();
  }

  /** Waits until byte {@code index} of {@code mr} is non-zero (placement is in order). */
  private static void awaitPlaced(MemoryRegion mr, int index) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (mr.buffer().get(index) == 0) {
      assertTrue(System.nanoTime() < deadline, "first half of the payload never placed");
      LockSupport.parkNanos(100_000);
    }
  }

  private static byte[] snapshot(MemoryRegion mr) {
    byte[] copy = new byte[(int) mr.length()];
    mr.buffer().get(copy);
    return copy;
  }

  @Test
  void shouldPlaceNothingOfAWriteAfterItsWindowWasInvalidatedMidPayload() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open();
        RawPeer peer = new RawPeer(rig)) {
      MemoryRegion owner = rig.register(rig.pdB, SIZE, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      peer.victim.postSend(
          new SendWorkRequest(1)
              .wrId(1)
              .bind(mw, owner, owner.address(), SIZE, AccessFlags.REMOTE_WRITE));
      rig.expect(peer.cqV, WcStatus.SUCCESS, 1);
      int rkey = mw.rkey();

      peer.writeHeader(owner.address(), rkey, SIZE);
      peer.writeAll(payload(0, HALF));
      awaitPlaced(owner, HALF - 1);
      peer.victim.postSend(new SendWorkRequest(1).wrId(2).localInvalidate(rkey));
      rig.expect(peer.cqV, WcStatus.SUCCESS, 2);
      byte[] atInvalidation = snapshot(owner);

      peer.writeAll(payload(HALF, SIZE));
      ResponseFlyweight answer = peer.readResponse();
      assertEquals(ResponseFlyweight.TYPE_NAK, answer.type());
      assertEquals(WcStatus.REM_ACCESS_ERR.code(), answer.syndrome());
      assertArrayEquals(atInvalidation, snapshot(owner), "bytes placed after LOCAL_INV completed");
      VerbsTestRig.assertAll(owner, SIZE - 4096, SIZE, (byte) 0);
      VerbsTestRig.awaitState(peer.victim, QpState.ERROR);
    }
  }

  /**
   * As above, for a write that follows a large one on the same connection: its header and the first
   * bytes of its payload arrive in one segment (the read-ahead holds them, limited to a small read
   * after the large payload), the rest goes from the socket straight into the region. Neither path
   * places a byte once the invalidation completed.
   */
  @Test
  void shouldPlaceNothingAfterInvalidationOfAWriteThatFollowsALargeOne() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open();
        RawPeer peer = new RawPeer(rig)) {
      MemoryRegion owner = rig.register(rig.pdB, SIZE, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      peer.victim.postSend(
          new SendWorkRequest(1)
              .wrId(1)
              .bind(mw, owner, owner.address(), SIZE, AccessFlags.REMOTE_WRITE));
      rig.expect(peer.cqV, WcStatus.SUCCESS, 1);
      int rkey = mw.rkey();
      int large = 64 * 1024;
      peer.writeHeader(owner.address(), rkey, large);
      peer.writeAll(payload(0, large));
      assertEquals(ResponseFlyweight.TYPE_ACK, peer.readResponse().type());

      int second = HALF - large;
      peer.writeHeaderWith(owner.address() + large, rkey, second, payload(large, large + 1024));
      peer.writeAll(payload(large + 1024, large + second / 2));
      awaitPlaced(owner, large + second / 2 - 1);
      peer.victim.postSend(new SendWorkRequest(1).wrId(2).localInvalidate(rkey));
      rig.expect(peer.cqV, WcStatus.SUCCESS, 2);
      byte[] atInvalidation = snapshot(owner);

      peer.writeAll(payload(large + second / 2, large + second));
      ResponseFlyweight answer = peer.readResponse();
      assertEquals(ResponseFlyweight.TYPE_NAK, answer.type());
      assertEquals(WcStatus.REM_ACCESS_ERR.code(), answer.syndrome());
      assertArrayEquals(atInvalidation, snapshot(owner), "bytes placed after LOCAL_INV completed");
      VerbsTestRig.assertAll(owner, large + second - 4096, SIZE, (byte) 0);
      VerbsTestRig.awaitState(peer.victim, QpState.ERROR);
    }
  }

  @Test
  void shouldPlaceNothingOfAWriteAfterItsRegionWasDeregisteredMidPayload() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open();
        RawPeer peer = new RawPeer(rig)) {
      MemoryRegion grant =
          rig.pdB.registerMemory(
              ByteBuffer.allocateDirect(SIZE), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      ByteBuffer memory = grant.buffer();
      peer.writeHeader(grant.address(), grant.rkey(), SIZE);
      peer.writeAll(payload(0, HALF));
      awaitPlaced(grant, HALF - 1);
      grant.close();
      byte[] atClose = new byte[SIZE];
      memory.duplicate().get(atClose);

      peer.writeAll(payload(HALF, SIZE));
      ResponseFlyweight answer = peer.readResponse();
      assertEquals(ResponseFlyweight.TYPE_NAK, answer.type());
      assertEquals(WcStatus.REM_ACCESS_ERR.code(), answer.syndrome());
      byte[] after = new byte[SIZE];
      memory.duplicate().get(after);
      assertArrayEquals(atClose, after, "bytes placed after the region was deregistered");
      assertEquals(0, after[SIZE - 1]);
    }
  }

  @Test
  void shouldNakAWriteWhosePayloadStallsAndFailTheQueuePair() throws IOException {
    DeviceOptions quick = new DeviceOptions().payloadTimeout(Duration.ofMillis(300));
    try (VerbsTestRig rig = VerbsTestRig.open(quick);
        RawPeer peer = new RawPeer(rig)) {
      MemoryRegion grant =
          rig.register(rig.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      peer.writeHeader(grant.address(), grant.rkey(), SIZE);
      peer.writeAll(payload(0, 1000));
      long start = System.nanoTime();
      ResponseFlyweight answer = peer.readResponse();
      long waited = System.nanoTime() - start;
      assertEquals(ResponseFlyweight.TYPE_NAK, answer.type());
      assertEquals(WcStatus.REM_OP_ERR.code(), answer.syndrome());
      assertTrue(
          waited >= TimeUnit.MILLISECONDS.toNanos(250),
          "NAKed after " + waited + " ns, before the payload timeout");
      VerbsTestRig.awaitState(peer.victim, QpState.ERROR);
      // The rest of the payload is never placed, even if it comes now.
      try {
        peer.writeAll(payload(1000, SIZE));
      } catch (IOException expected) {
        // the responder closed the connection
      }
      VerbsTestRig.assertAll(grant, 1000, SIZE, (byte) 0);
    }
  }

  @Test
  void shouldRejectANonPositivePayloadTimeout() {
    assertEquals(
        io.srdma.verbs.VerbsException.Reason.INVALID_ARGUMENT,
        org.junit.jupiter.api.Assertions.assertThrows(
                io.srdma.verbs.VerbsException.class,
                () -> new DeviceOptions().payloadTimeout(Duration.ZERO).conclude())
            .reason());
  }
}
