package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsTestRig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The responder's read-ahead is sized by traffic, never by a frame: small for small requests and
 * idle connections, grown for a burst up to {@link ReadAhead#LARGE_SIZE} and no further, back to
 * small when idle; hostile length fields are refused or skipped without allocating beyond it.
 * Frames are written by hand, as a peer's requester would (or a hostile one could).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResponderReadAheadTest {
  private static final int FAKE_QPN = 0x515151;
  private static final int FAKE_PSN = 0x20;
  private final RequestFlyweight frame = new RequestFlyweight();

  /** A fresh QP of B in RTR whose peer is this test, and the connection to its responder. */
  private static SoftQueuePair victim(VerbsTestRig rig) {
    var cq = rig.track(rig.ctxB.createCompletionQueue(16));
    SoftQueuePair qp =
        (SoftQueuePair) rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cq, 4, 1)));
    qp.init(AccessFlags.REMOTE_WRITE);
    qp.readyToReceive(new ConnectionInfo(FAKE_QPN, FAKE_PSN, rig.qpA.localInfo().address()));
    return qp;
  }

  private SocketChannel connect(VerbsTestRig rig, SoftQueuePair qp) throws IOException {
    SocketChannel ch = SocketChannel.open(((SoftDeviceContext) rig.ctxB).responderAddress());
    ByteBuffer hello = ByteBuffer.allocateDirect(RequestFlyweight.LENGTH);
    frame
        .wrap(hello, 0)
        .encode(
            RequestFlyweight.OP_HELLO,
            (byte) 0,
            FAKE_PSN,
            0,
            FAKE_QPN,
            RequestFlyweight.HELLO_MAGIC,
            qp.qpn());
    writeAll(ch, hello);
    ByteBuffer answer = ByteBuffer.allocateDirect(ResponseFlyweight.LENGTH);
    while (answer.hasRemaining() && ch.read(answer) >= 0) {
      // the HELLO_ACK
    }
    assertEquals(ResponseFlyweight.TYPE_HELLO_ACK, new ResponseFlyweight().wrap(answer, 0).type());
    return ch;
  }

  private static void writeAll(SocketChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  private static boolean dropped(SocketChannel ch) throws IOException {
    ByteBuffer sink = ByteBuffer.allocateDirect(256);
    while (true) {
      sink.clear();
      if (ch.read(sink) < 0) {
        return true;
      }
    }
  }

  /**
   * Reads responses until the ACK of {@code psn} (cumulative ACKs of earlier ones may come first).
   */
  private static void awaitAck(SocketChannel ch, int psn) throws IOException {
    ByteBuffer b = ByteBuffer.allocateDirect(ResponseFlyweight.LENGTH);
    ResponseFlyweight response = new ResponseFlyweight();
    while (true) {
      b.clear();
      while (b.hasRemaining()) {
        if (ch.read(b) < 0) {
          throw new IOException("the responder closed before acknowledging PSN " + psn);
        }
      }
      response.wrap(b, 0);
      assertEquals(ResponseFlyweight.TYPE_ACK, response.type(), "only ACKs for valid writes");
      if (response.psn() == psn) {
        return;
      }
    }
  }

  private static void awaitCapacity(Responder r, int expected) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (r.readAheadCapacity() != expected && System.nanoTime() < deadline) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
    assertEquals(expected, r.readAheadCapacity(), "read-ahead capacity");
  }

  @Test
  void shouldGrowForABurstUpToTheBoundAndShrinkWhenIdle() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      SoftQueuePair qp = victim(rig);
      try (SocketChannel peer = connect(rig, qp)) {
        Responder r = qp.responder();
        assertEquals(ReadAhead.SMALL_SIZE, r.readAheadCapacity(), "a new connection is small");
        // 64 Ki empty WRITEs (valid, touching no memory): 2 MiB of back-to-back small requests
        int count = 64 * 1024;
        ByteBuffer burst = ByteBuffer.allocateDirect(count * RequestFlyweight.LENGTH);
        for (int i = 0; i < count; i++) {
          frame
              .wrap(burst, i * RequestFlyweight.LENGTH)
              .encode(RequestFlyweight.OP_WRITE, (byte) 0, (FAKE_PSN + i) & 0xFFFFFF, 0, 0, 0, 0);
        }
        // sampled between chunks only as a sanity check: grow and shrink can both happen between
        // two
        // samples on a loaded machine, so the grow itself is judged by the responder's peak
        while (burst.hasRemaining()) {
          ByteBuffer chunk = burst.duplicate();
          chunk.limit(Math.min(burst.limit(), burst.position() + 64 * 1024));
          writeAll(peer, chunk);
          burst.position(chunk.position());
          int now = r.readAheadCapacity();
          assertTrue(now <= ReadAhead.LARGE_SIZE, "read-ahead above its bound: " + now);
        }
        // the burst is written when the socket took it, not when the responder read it (loopback
        // buffers can hold all 2 MiB): one more WRITE asks for an ACK, which comes only after every
        // request before it was executed
        int last = (FAKE_PSN + count) & 0xFFFFFF;
        ByteBuffer tail = ByteBuffer.allocateDirect(RequestFlyweight.LENGTH);
        frame
            .wrap(tail, 0)
            .encode(RequestFlyweight.OP_WRITE, RequestFlyweight.FLAG_ACK_REQ, last, 0, 0, 0, 0);
        writeAll(peer, tail);
        awaitAck(peer, last);
        awaitCapacity(r, ReadAhead.SMALL_SIZE); // idle: back to small
        assertEquals(QpState.RTR, qp.state(), "the burst was served");
        // the idle shrink happened after a grow: the burst did grow it, to the bound at most
        assertEquals(
            ReadAhead.LARGE_SIZE,
            r.readAheadPeak(),
            "a burst of small requests grows the read-ahead");
      }
    }
  }

  /**
   * Once the read-ahead grew for a burst of small requests, a stream of large WRITEs still lands
   * from the socket straight into the region: after a large payload the read-ahead reads no more
   * than a small one's worth, so at most that much of each later payload is copied through it.
   * Every byte still lands where it was written.
   */
  @Test
  void shouldPlaceLargePayloadsStraightIntoTheRegionAfterABurst() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      SoftQueuePair qp = victim(rig);
      int record = 64 * 1024;
      int records = 32;
      var mr =
          rig.register(
              rig.pdB, record * records, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      try (SocketChannel peer = connect(rig, qp)) {
        Responder r = qp.responder();
        int psn = FAKE_PSN;
        int small = 8 * 1024; // empty WRITEs, valid and touching no memory: a burst
        ByteBuffer burst = ByteBuffer.allocateDirect(small * RequestFlyweight.LENGTH);
        for (int i = 0; i < small; i++) {
          frame
              .wrap(burst, i * RequestFlyweight.LENGTH)
              .encode(RequestFlyweight.OP_WRITE, (byte) 0, psn++ & 0xFFFFFF, 0, 0, 0, 0);
        }
        writeAll(peer, burst);
        ByteBuffer request = ByteBuffer.allocateDirect(RequestFlyweight.LENGTH + record);
        for (int k = 0; k < records; k++) {
          request.clear();
          frame
              .wrap(request, 0)
              .encode(
                  RequestFlyweight.OP_WRITE,
                  k == records - 1 ? RequestFlyweight.FLAG_ACK_REQ : (byte) 0,
                  psn++ & 0xFFFFFF,
                  record,
                  0,
                  mr.address() + (long) k * record,
                  mr.rkey());
          for (int i = RequestFlyweight.LENGTH; i < request.capacity(); i++) {
            request.put(i, (byte) (k + 1));
          }
          writeAll(peer, request);
        }
        awaitAck(peer, (psn - 1) & 0xFFFFFF);
        assertEquals(ReadAhead.LARGE_SIZE, r.readAheadPeak(), "the burst grew the read-ahead");
        long copied = r.payloadCopiedFromReadAhead();
        assertTrue(
            // the first payload may come in a read of the grown read-ahead (the request before it
            // was small); each later one brings at most a small read-ahead's worth with its header
            copied <= ReadAhead.LARGE_SIZE + (long) records * ReadAhead.SMALL_SIZE,
            () -> copied + " of " + records * record + " payload bytes copied via the read-ahead");
        for (int k = 0; k < records; k++) {
          VerbsTestRig.assertAll(mr, k * record, (k + 1) * record, (byte) (k + 1));
        }
      }
    }
  }

  @Test
  void shouldSkipAPayloadOfTheLargestLengthThroughTheSmallReadAhead() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      SoftQueuePair qp = victim(rig);
      ByteBuffer junk = ByteBuffer.allocateDirect(1 << 20);
      ByteBuffer header = ByteBuffer.allocateDirect(RequestFlyweight.LENGTH);
      try (SocketChannel peer = connect(rig, qp)) {
        Responder r = qp.responder();
        long before = QueuePairDescriptorsTest.direct();
        // valid length, unknown rkey: the payload is discarded before the NAK
        frame
            .wrap(header, 0)
            .encode(
                RequestFlyweight.OP_WRITE,
                (byte) 0,
                FAKE_PSN,
                (int) SoftDeviceContext.MAX_MESSAGE_SIZE,
                0,
                0x1000,
                0x7777);
        writeAll(peer, header);
        for (int i = 0; i < 8; i++) {
          junk.clear();
          writeAll(peer, junk);
        }
        long added = QueuePairDescriptorsTest.direct() - before;
        assertEquals(ReadAhead.SMALL_SIZE, r.readAheadCapacity(), "one request grows nothing");
        assertTrue(added <= ReadAhead.LARGE_SIZE, () -> "skipping allocated " + added + " B");
      }
      VerbsTestRig.awaitState(qp, QpState.ERROR);
    }
  }

  @Test
  void shouldRefuseHostileLengthsWithoutAllocating() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      int[] hostile = {-1, Integer.MIN_VALUE, (int) SoftDeviceContext.MAX_MESSAGE_SIZE + 1};
      ByteBuffer header = ByteBuffer.allocateDirect(RequestFlyweight.LENGTH);
      for (int length : hostile) {
        SoftQueuePair qp = victim(rig);
        try (SocketChannel peer = connect(rig, qp)) {
          long before = QueuePairDescriptorsTest.direct();
          header.clear();
          frame
              .wrap(header, 0)
              .encode(RequestFlyweight.OP_SEND, (byte) 0, FAKE_PSN, length, 0, 0, 0);
          writeAll(peer, header);
          assertTrue(dropped(peer), "length " + length + " is refused");
          long added = QueuePairDescriptorsTest.direct() - before;
          assertTrue(
              added < ReadAhead.SMALL_SIZE,
              () -> "refusing length " + length + " allocated " + added + " B");
          assertTrue(qp.responder().readAheadCapacity() <= ReadAhead.SMALL_SIZE);
        }
        VerbsTestRig.awaitState(qp, QpState.ERROR);
      }
    }
  }
}
