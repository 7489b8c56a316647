package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One drive of a hosted responder is bounded ({@link Responder#HOSTED_READS} socket reads, {@link
 * Responder#HOSTED_BYTES} payload bytes), so one peer streaming requests cannot hold the thread
 * that polls a {@link CompletionProgress#POLLER} queue, nor starve the other queue pairs it serves.
 *
 * <p>Observed without any clock: the test thread is the poller and calls {@code poll()} one at a
 * time, and after each call counts the bytes of the stream that landed in the target region (every
 * streamed byte is non-zero and lands in order, so what landed is a prefix). Before each call it
 * lets the streaming peer fill the connection as far as the kernel allows (until its posting thread
 * blocks on the full socket), so an unbounded drive would take far more than the bound in one call.
 * While the stream goes on, a second queue pair of the same queue gets one WRITE_WITH_IMM, which
 * must be placed and reported before the stream has landed. A huge READ is observed from a raw
 * socket that only the test thread reads: what it has read after k polls is at most what k drives
 * sent. A refused WRITE's payload, discarded through the read-ahead, is observed by the responder's
 * count of discarded bytes: no poll places and discards more than the byte bound together. Small
 * WRITEs right behind a large one, read into the read-ahead when a drive has little of its bound
 * left, are placed from it no further than the bound: the rest waits there, for the next poll.
 *
 * <p>Without the cut of each read and write to what is left of the byte bound, one read straight
 * into the region (or one write of READ data) took all the socket held or had room for: 2 to 7 MiB
 * in one poll here (Linux, tcp_rmem max 32 MiB, tcp_wmem max 4 MiB). On a host whose socket buffers
 * stay under 1 MiB those two tests could not tell.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostedDriveBoundsTest {
  private static final byte MARK = 0x5A;
  private static final int HUGE = 64 << 20;
  private static final int SMALL = 1024;
  private static final int SMALL_COUNT = 16 * 1024; // 16 MiB in 1 KiB writes
  private static final int SECOND_IMM = 0x5EC0;

  /** The refused WRITE's payload, discarded over many polls, and the small WRITEs before it. */
  private static final int DISCARD_REFUSED = 16 << 20;

  private static final int DISCARD_SMALL = 1000;
  private static final int DISCARD_SMALL_COUNT = 1500;

  /**
   * The mixed stream: rounds of one large WRITE (placed straight into the region, most of it) and,
   * at once behind it, a burst of small WRITEs (read through the grown read-ahead, a drive's 8
   * reads about 0.5 MiB of them). The large sizes are odd, 1.6 to 1.7 MiB: the drive in which one
   * ends has at most about 0.4 MiB of its bound left, less than its reads bring of the small ones.
   */
  private static final int MIXED_ROUNDS = 6;

  private static final int MIXED_LARGE = (1 << 20) + 600 * 1024;
  private static final int MIXED_LARGE_STEP = 13 * 1024 + 7;
  private static final int MIXED_SMALL = 1000;
  private static final int MIXED_SMALL_COUNT = 1000;

  /**
   * The bounds docs/verbs.md states for one drive ("reads at most 8 batches and moves at most 1 MiB
   * of payload"), written out rather than taken from {@link Responder#HOSTED_READS} and {@link
   * Responder#HOSTED_BYTES}: raising those must fail these tests, not move their expectations.
   */
  private static final int DOCUMENTED_READS = 8;

  private static final long DOCUMENTED_BYTES = 1 << 20;

  /**
   * One poll's share of a huge WRITE: the byte bound. The payload bytes that came into the
   * read-ahead with the header count towards it, and no read takes more than is left of it.
   */
  private static final long HUGE_SHARE = DOCUMENTED_BYTES;

  /**
   * One poll's share of a stream of small WRITEs: the read bound's reads of at most a large
   * read-ahead, plus, around each, the rest of a payload that one of them cut (read straight into
   * its region, not through the read-ahead). Well under the byte bound, so the read bound, not the
   * byte bound, is what holds it.
   */
  private static final long SMALL_SHARE =
      (long) DOCUMENTED_READS * ReadAhead.LARGE_SIZE + (long) (DOCUMENTED_READS + 1) * SMALL;

  @Test
  void shouldPlaceAHugeWriteAtMostOneByteBoundPerPollAndServeTheOtherQueuePairMeanwhile() {
    assertTrue(HUGE_SHARE * 8 < HUGE, "the stream spans many bounds (sanity)");
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Rig r = rig(rig, 4);
      MemoryRegion src = rig.register(rig.pdA, HUGE, AccessFlags.LOCAL_WRITE);
      fill(src.buffer(), HUGE);
      MemoryRegion dst =
          rig.register(rig.pdB, HUGE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      Stream stream =
          new Stream(
              () -> {
                SendWorkRequest wr =
                    new SendWorkRequest(1)
                        .wrId(1)
                        .opcode(WrOpcode.RDMA_WRITE)
                        .remote(dst.address(), dst.rkey())
                        .signaled(true);
                wr.sgl().set(src, 0, HUGE);
                r.x.postSend(wr); // returns once all of it is in the socket
              });
      int polls = pollWhileStreaming(rig, r, stream, dst.buffer(), HUGE, HUGE_SHARE);
      assertTrue(polls >= HUGE / HUGE_SHARE, "polls that placed part of the stream: " + polls);
      stream.join();
      WorkCompletion wc = rig.awaitOne(r.cqX);
      assertEquals(WcStatus.SUCCESS, wc.status(), () -> "the huge write: " + wc);
      assertEquals(-1, dst.buffer().mismatch(src.buffer()), "the huge write landed whole");
    }
  }

  @Test
  void shouldPlaceAtMostTheReadBoundOfSmallWritesPerPollAndServeTheOtherQueuePairMeanwhile() {
    assertTrue(SMALL_SHARE < DOCUMENTED_BYTES, "the read bound is the tighter one (sanity)");
    long total = (long) SMALL * SMALL_COUNT;
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Rig r = rig(rig, SMALL_COUNT);
      MemoryRegion src = rig.register(rig.pdA, SMALL, AccessFlags.LOCAL_WRITE);
      fill(src.buffer(), SMALL);
      MemoryRegion dst =
          rig.register(rig.pdB, (int) total, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      Stream stream =
          new Stream(
              () -> {
                SendWorkRequest wr = new SendWorkRequest(1);
                for (int i = 0; i < SMALL_COUNT; i++) {
                  wr.wrId(i)
                      .opcode(WrOpcode.RDMA_WRITE)
                      .remote(dst.address() + (long) i * SMALL, dst.rkey())
                      .signaled(true);
                  wr.sgl().clear();
                  wr.sgl().set(src, 0, SMALL);
                  r.x.postSend(wr);
                }
              });
      int polls = pollWhileStreaming(rig, r, stream, dst.buffer(), total, SMALL_SHARE);
      assertTrue(polls >= total / SMALL_SHARE, "polls that placed part of the stream: " + polls);
      stream.join();
      WorkCompletion[] wcs = new WorkCompletion[64];
      for (int i = 0; i < wcs.length; i++) {
        wcs[i] = new WorkCompletion();
      }
      int done = 0;
      while (done < SMALL_COUNT) {
        int n = r.cqX.await(wcs, VerbsTestRig.COMPLETION_WAIT);
        assertTrue(n > 0, "write completions: " + done + " of " + SMALL_COUNT);
        for (int i = 0; i < n; i++) {
          assertEquals(WcStatus.SUCCESS, wcs[i].status(), "write " + wcs[i].wrId());
        }
        done += n;
      }
      for (int i = 0; i < SMALL_COUNT; i++) {
        assertEquals(
            -1,
            dst.buffer().slice(i * SMALL, SMALL).mismatch(src.buffer()),
            "small write " + i + " landed whole");
      }
    }
  }

  @Test
  void shouldSendAHugeReadAtMostOneByteBoundPerPoll() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeTrue(
          rig.ctxB instanceof SoftDeviceContext,
          "needs the soft provider (its responders); this run uses "
              + rig.ctxB.getClass().getSimpleName());
      CompletionQueue cqC = rig.track(rig.ctxA.createCompletionQueue(16));
      CompletionQueue cqV =
          rig.track(rig.ctxB.createCompletionQueue(16, CompletionProgress.POLLER));
      QueuePair c = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqC, 4, 1)));
      QueuePair v = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 4, 1)));
      c.init(AccessFlags.REMOTE_READ);
      v.init(AccessFlags.REMOTE_READ);
      c.readyToReceive(v.localInfo());
      v.readyToReceive(c.localInfo());
      MemoryRegion src =
          rig.register(rig.pdB, HUGE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ);
      fill(src.buffer(), HUGE);
      // A raw socket speaks for C, so that only this thread reads the READ's data: what it has
      // read after k polls is at most what k drives sent.
      try (SocketChannel peer = rawPeer(rig, c, v, cqV, 1)) {
        int psn = c.localInfo().psn();
        WorkCompletion[] wcs = {new WorkCompletion()};
        writeAll(
            peer,
            request(
                RequestFlyweight.OP_READ,
                RequestFlyweight.FLAG_ACK_REQ,
                psn,
                HUGE,
                0,
                src.address(),
                src.rkey()));
        ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
        long expected = ResponseFlyweight.LENGTH + (long) HUGE;
        long got = 0;
        int polls = 0;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (got < expected) {
          long sofar = got;
          assertTrue(
              System.nanoTime() < until,
              () -> "the READ stalled at " + sofar + " of " + expected + " bytes");
          cqV.poll(wcs);
          polls++;
          int n;
          while ((n = peer.read(in)) > 0) {
            in.flip();
            if (got < ResponseFlyweight.LENGTH) {
              assertEquals(0, got, "the response header comes in one read");
              ResponseFlyweight h = new ResponseFlyweight().wrap(in, 0);
              assertEquals(ResponseFlyweight.TYPE_READ_RESP, h.type(), "a READ response");
              assertEquals(HUGE, h.length(), "of the whole READ");
              in.position(ResponseFlyweight.LENGTH);
            }
            while (in.hasRemaining()) {
              assertEquals(MARK, in.get(), "READ data");
            }
            in.clear();
            got += n;
          }
          assertTrue(n == 0, "the responder closed mid-response");
          long bound = ResponseFlyweight.LENGTH + polls * DOCUMENTED_BYTES;
          long read = got;
          int p = polls;
          assertTrue(
              read <= bound,
              () ->
                  p
                      + " polls sent "
                      + read
                      + " bytes of the READ response, more than "
                      + p
                      + " drives may ("
                      + bound
                      + ")");
        }
        assertTrue(polls >= HUGE / DOCUMENTED_BYTES, "polls that sent part of the READ: " + polls);
      }
    }
  }

  @Test
  void shouldDiscardARefusedWriteAtMostOneByteBoundPerPollAndServeTheOtherQueuePairMeanwhile()
      throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Rig r = rig(rig, 4); // only Y -> W is used: the second queue pair
      int all = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
      CompletionQueue cqC = rig.track(rig.ctxA.createCompletionQueue(16));
      QueuePair c = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqC, 4, 1)));
      QueuePair u = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(r.cqV, 16, 1)));
      c.init(all);
      u.init(all);
      c.readyToReceive(u.localInfo());
      u.readyToReceive(c.localInfo());
      int smallTotal = DISCARD_SMALL * DISCARD_SMALL_COUNT;
      MemoryRegion dst =
          rig.register(
              rig.pdB,
              smallTotal + DISCARD_SMALL,
              AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      // The small WRITEs grow the read-ahead to its large size (a discard then reads 64 KiB at a
      // time); the refused WRITE falls outside dst (REM_ACCESS_ERR); the valid WRITE after it must
      // never be placed: a NAK ends the connection.
      int psn = c.localInfo().psn();
      ByteBuffer out =
          ByteBuffer.allocateDirect(
              (DISCARD_SMALL_COUNT + 2) * (RequestFlyweight.LENGTH + DISCARD_SMALL)
                  + DISCARD_REFUSED);
      ByteBuffer payload = ByteBuffer.allocate(Math.max(DISCARD_SMALL, 64 * 1024));
      fill(payload, payload.capacity());
      for (int i = 0; i < DISCARD_SMALL_COUNT; i++) {
        out.put(
            request(
                RequestFlyweight.OP_WRITE,
                (byte) 0,
                psn++,
                DISCARD_SMALL,
                0,
                dst.address() + (long) i * DISCARD_SMALL,
                dst.rkey()));
        out.put(payload.duplicate().limit(DISCARD_SMALL));
      }
      int refusedPsn = psn++;
      out.put(
          request(
              RequestFlyweight.OP_WRITE,
              (byte) 0,
              refusedPsn,
              DISCARD_REFUSED,
              0,
              dst.address() + smallTotal, // runs past the end of dst
              dst.rkey()));
      for (int left = DISCARD_REFUSED; left > 0; left -= payload.capacity()) {
        out.put(payload.duplicate().limit(Math.min(left, payload.capacity())));
      }
      int refusedEnd = out.position();
      out.put(
          request(
              RequestFlyweight.OP_WRITE,
              (byte) 0,
              psn,
              DISCARD_SMALL,
              0,
              dst.address() + smallTotal,
              dst.rkey()));
      out.put(payload.duplicate().limit(DISCARD_SMALL));
      out.flip();

      SecondWrite second = new SecondWrite(rig, r);
      try (SocketChannel peer = rawPeer(rig, c, u, r.cqV, 3)) {
        Responder responder = ((SoftQueuePair) u).responder();
        WorkCompletion[] wcs = new WorkCompletion[16];
        for (int i = 0; i < wcs.length; i++) {
          wcs[i] = new WorkCompletion();
        }
        ByteBuffer in = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
        long placed = 0;
        long discarded = 0;
        long discardedWhenSecondReported = -1;
        int sentAtNak = -1;
        int polls = 0;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (sentAtNak < 0) {
          long sofar = discarded;
          assertTrue(
              System.nanoTime() < until,
              () -> "the discard stalled at " + sofar + " of " + DISCARD_REFUSED + " bytes");
          while (out.hasRemaining() && peer.write(out) > 0) {
            // fill the connection as far as the kernel takes
          }
          int n = r.cqV.poll(wcs);
          polls++;
          for (int i = 0; i < n; i++) {
            WorkCompletion wc = wcs[i];
            if (wc.qpNum() == u.qpn()) {
              continue; // U's queue pair failing after its NAK
            }
            second.assertReported(wc);
            discardedWhenSecondReported = responder.payloadDiscarded();
          }
          long nowPlaced = landedPrefix(dst.buffer(), placed, smallTotal);
          long nowDiscarded = responder.payloadDiscarded();
          long took = (nowPlaced - placed) + (nowDiscarded - discarded);
          long p0 = placed;
          long d0 = discarded;
          assertTrue(
              took <= DOCUMENTED_BYTES,
              () ->
                  "one poll placed "
                      + (nowPlaced - p0)
                      + " and discarded "
                      + (nowDiscarded - d0)
                      + " payload bytes, more than the bound of a drive, "
                      + DOCUMENTED_BYTES);
          placed = nowPlaced;
          discarded = nowDiscarded;
          if (discarded > 0) {
            // the discard is under way: the second queue pair's request must not wait for its end
            second.postOnce();
          }
          int got;
          while ((got = peer.read(in)) > 0 && !in.hasRemaining()) {
            ResponseFlyweight h = new ResponseFlyweight().wrap(in, 0);
            assertEquals(ResponseFlyweight.TYPE_NAK, h.type(), "no valid request asks for an ACK");
            assertEquals(refusedPsn, h.psn(), "the NAK names the refused WRITE");
            assertEquals(
                WcStatus.REM_ACCESS_ERR,
                WcStatus.fromCode(h.syndrome() & 0xFF),
                "the NAK's status");
            sentAtNak = out.position();
            in.clear();
          }
          assertTrue(got >= 0 || sentAtNak >= 0, "the responder closed without a NAK");
        }
        assertTrue(
            sentAtNak >= refusedEnd,
            "the NAK came after " + sentAtNak + " bytes, before the refused payload ended");
        assertEquals(DISCARD_REFUSED, responder.payloadDiscarded(), "the whole payload discarded");
        assertEquals(smallTotal, placed, "every small write before the refused one placed");
        for (int i = 0; i < DISCARD_SMALL; i++) {
          assertEquals(0, dst.buffer().get(smallTotal + i), "nothing after the refused WRITE");
        }
        assertTrue(
            polls >= DISCARD_REFUSED / DOCUMENTED_BYTES, "polls that discarded part: " + polls);
        assertTrue(
            discardedWhenSecondReported >= 0 && discardedWhenSecondReported < DISCARD_REFUSED,
            "the second queue pair's write reported while the discard went on: "
                + discardedWhenSecondReported);
        assertEquals(WcStatus.SUCCESS, rig.awaitOne(r.cqY).status(), "the second write's ACK");
      }
    }
  }

  @Test
  void shouldPlaceSmallWritesBehindALargeOneWithinTheByteBoundAndLoseNone() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeTrue(
          rig.ctxB instanceof SoftDeviceContext,
          "needs the soft provider (its responders); this run uses "
              + rig.ctxB.getClass().getSimpleName());
      int all = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
      CompletionQueue cqC = rig.track(rig.ctxA.createCompletionQueue(16));
      CompletionQueue cqV =
          rig.track(rig.ctxB.createCompletionQueue(16, CompletionProgress.POLLER));
      QueuePair c = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqC, 4, 1)));
      QueuePair v = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 4, 1)));
      c.init(all);
      v.init(all);
      c.readyToReceive(v.localInfo());
      v.readyToReceive(c.localInfo());
      // Every WRITE lands right behind the one before, its bytes all its own tag (non-zero): what
      // landed is a prefix, and the end state shows each payload in its place. Only the last
      // WRITE asks for an ACK: the responder checks each PSN in turn, so that ACK says every
      // header was taken once and in order.
      int writes = MIXED_ROUNDS * (1 + MIXED_SMALL_COUNT);
      long totalLong = 0;
      for (int round = 0; round < MIXED_ROUNDS; round++) {
        totalLong += MIXED_LARGE + (long) round * MIXED_LARGE_STEP;
        totalLong += (long) MIXED_SMALL * MIXED_SMALL_COUNT;
      }
      int total = Math.toIntExact(totalLong);
      ByteBuffer expected = ByteBuffer.allocate(total);
      MemoryRegion dst =
          rig.register(rig.pdB, total, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      ByteBuffer out = ByteBuffer.allocateDirect(writes * RequestFlyweight.LENGTH + total);
      int psn = c.localInfo().psn();
      int lastPsn = -1;
      int at = 0;
      int write = 0;
      for (int round = 0; round < MIXED_ROUNDS; round++) {
        for (int k = 0; k <= MIXED_SMALL_COUNT; k++) {
          int len = k == 0 ? MIXED_LARGE + round * MIXED_LARGE_STEP : MIXED_SMALL;
          byte tag = (byte) (1 + write % 251);
          boolean last = write == writes - 1;
          lastPsn = psn;
          out.put(
              request(
                  RequestFlyweight.OP_WRITE,
                  last ? RequestFlyweight.FLAG_ACK_REQ : (byte) 0,
                  psn,
                  len,
                  0,
                  dst.address() + at,
                  dst.rkey()));
          psn = (psn + 1) & 0xFFFFFF;
          for (int i = 0; i < len; i++) {
            expected.put(at + i, tag);
          }
          out.put(expected.slice(at, len));
          at += len;
          write++;
        }
      }
      out.flip();

      try (SocketChannel peer = rawPeer(rig, c, v, cqV, 1)) {
        WorkCompletion[] wcs = new WorkCompletion[16];
        for (int i = 0; i < wcs.length; i++) {
          wcs[i] = new WorkCompletion();
        }
        ByteBuffer in = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
        long placed = 0;
        boolean acked = false;
        int polls = 0;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!acked || placed < total) {
          long sofar = placed;
          assertTrue(
              System.nanoTime() < until,
              () -> "the stream stalled at " + sofar + " of " + total + " bytes");
          while (out.hasRemaining() && peer.write(out) > 0) {
            // fill the connection as far as the kernel takes
          }
          assertEquals(0, cqV.poll(wcs), "no completion: plain WRITEs, none failed");
          polls++;
          long now = landedPrefix(dst.buffer(), placed, total);
          long took = now - placed;
          long before = placed;
          assertTrue(
              took <= DOCUMENTED_BYTES,
              () ->
                  "one poll placed "
                      + took
                      + " payload bytes (from "
                      + before
                      + "), more than the bound of a drive, "
                      + DOCUMENTED_BYTES);
          placed = now;
          int got;
          while ((got = peer.read(in)) > 0 && !in.hasRemaining()) {
            ResponseFlyweight h = new ResponseFlyweight().wrap(in, 0);
            assertEquals(ResponseFlyweight.TYPE_ACK, h.type(), "only the last WRITE is answered");
            assertEquals(lastPsn, h.psn(), "the ACK names the last WRITE");
            assertFalse(acked, "one ACK");
            acked = true;
            in.clear();
          }
          assertTrue(got >= 0, "the responder closed the connection");
        }
        assertEquals(-1, dst.buffer().mismatch(expected), "every WRITE landed once, in its place");
        assertTrue(polls >= total / DOCUMENTED_BYTES, "polls that placed part: " + polls);
        assertNotEquals(QpState.ERROR, v.state(), "the queue pair did not fail");
      }
    }
  }

  // ---- the observation ----

  /**
   * Polls the POLLER queue one {@code poll()} at a time until the {@code total} streamed bytes have
   * landed in {@code dst}, each call after the stream filled the connection. Checks that no call
   * placed more than {@code share} of it, and that the second queue pair's WRITE_WITH_IMM, posted
   * once the stream started landing, was placed and reported before the stream had landed.
   */
  private static int pollWhileStreaming(
      VerbsTestRig rig, Rig r, Stream stream, ByteBuffer dst, long total, long share) {
    SecondWrite second = new SecondWrite(rig, r);
    WorkCompletion[] wcs = new WorkCompletion[16];
    for (int i = 0; i < wcs.length; i++) {
      wcs[i] = new WorkCompletion();
    }
    long placed = 0;
    int polls = 0;
    long secondReportedAt = -1;
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (placed < total) {
      long landed = placed;
      assertTrue(
          System.nanoTime() < until, () -> "the stream stalled at " + landed + " of " + total);
      stream.awaitSocketFull();
      int n = r.cqV.poll(wcs);
      for (int i = 0; i < n; i++) {
        second.assertReported(wcs[i]);
        secondReportedAt = landedPrefix(dst, placed, total);
      }
      long now = landedPrefix(dst, placed, total);
      long took = now - placed;
      long before = placed;
      assertTrue(
          took <= share,
          () ->
              "one poll placed "
                  + took
                  + " bytes of the stream (from "
                  + before
                  + "), more than the bound of a drive, "
                  + share);
      if (took > 0) {
        polls++;
      }
      placed = now;
      if (placed > 0) {
        // the stream is landing: the second queue pair's request must not wait for its end
        second.postOnce();
      }
    }
    assertTrue(secondReportedAt >= 0, "the second queue pair's write was never reported");
    assertTrue(
        secondReportedAt < total,
        "the second queue pair's write was reported only once the stream had landed");
    assertEquals(WcStatus.SUCCESS, rig.awaitOne(r.cqY).status(), "the second write's ACK");
    stream.assertNoFailure();
    return polls;
  }

  /**
   * How many bytes of {@code dst} have landed: they land in order and are all non-zero, so a binary
   * search for the first zero byte at or after {@code from}.
   */
  private static long landedPrefix(ByteBuffer dst, long from, long total) {
    long lo = from; // [0, lo) landed
    long hi = total; // [hi, total) not (or hi == total)
    while (lo < hi) {
      long mid = (lo + hi) >>> 1;
      if (dst.get((int) mid) != 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * A raw socket that speaks for {@code c} to {@code v}'s responder: its HELLO answered and the
   * connection moved to {@code cqV}'s hosted loop (then {@code members} responders there), left
   * non-blocking, so only the test thread reads what the responder sends.
   */
  private static SocketChannel rawPeer(
      VerbsTestRig rig, QueuePair c, QueuePair v, CompletionQueue cqV, int members)
      throws IOException {
    SocketChannel peer = SocketChannel.open(((SoftDeviceContext) rig.ctxB).responderAddress());
    try {
      writeAll(
          peer,
          request(
              RequestFlyweight.OP_HELLO,
              (byte) 0,
              c.localInfo().psn(),
              0,
              c.qpn(),
              RequestFlyweight.HELLO_MAGIC,
              v.qpn()));
      ByteBuffer response = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
      while (response.hasRemaining()) {
        assertTrue(peer.read(response) >= 0, "the responder closed before the HELLO's answer");
      }
      assertEquals(
          ResponseFlyweight.TYPE_HELLO_ACK, new ResponseFlyweight().wrap(response, 0).type());
      ResponderLoop hosted = ((SoftCompletionQueue) cqV).hostedLoop();
      WorkCompletion[] wcs = {new WorkCompletion()};
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (hosted.memberCount() < members && System.nanoTime() < until) {
        cqV.poll(wcs);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
      assertEquals(
          members, hosted.memberCount(), "the checked connection moved to the polled queue");
      peer.configureBlocking(false);
      return peer;
    } catch (IOException | RuntimeException | Error e) {
      peer.close();
      throw e;
    }
  }

  private static ByteBuffer request(
      byte opcode, byte flags, int psn, int length, int imm, long address, int rkey) {
    ByteBuffer b = ByteBuffer.allocate(RequestFlyweight.LENGTH);
    new RequestFlyweight().wrap(b, 0).encode(opcode, flags, psn, length, imm, address, rkey);
    return b;
  }

  private static void writeAll(SocketChannel ch, ByteBuffer b) throws IOException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (b.hasRemaining()) {
      assertTrue(System.nanoTime() < until, "the responder did not take a request header");
      ch.write(b);
    }
  }

  private static void fill(ByteBuffer b, int size) {
    byte[] chunk = new byte[64 * 1024];
    java.util.Arrays.fill(chunk, MARK);
    for (int at = 0; at < size; at += chunk.length) {
      b.put(at, chunk, 0, Math.min(chunk.length, size - at));
    }
  }

  // ---- rig ----

  /**
   * X (on A) streams to V, Y (on A) writes to W; V and W (on B) report to the one POLLER queue cqV,
   * whose hosted loop holds both their responders.
   */
  private record Rig(
      CompletionQueue cqX,
      CompletionQueue cqY,
      CompletionQueue cqV,
      QueuePair x,
      QueuePair y,
      QueuePair v,
      QueuePair w) {}

  private static Rig rig(VerbsTestRig rig, int streamDepth) {
    assumeTrue(
        rig.ctxB instanceof SoftDeviceContext,
        "needs the soft provider (its responders); this run uses "
            + rig.ctxB.getClass().getSimpleName());
    int all = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    CompletionQueue cqX = rig.track(rig.ctxA.createCompletionQueue(2 * streamDepth));
    CompletionQueue cqY = rig.track(rig.ctxA.createCompletionQueue(16));
    CompletionQueue cqV =
        rig.track(rig.ctxB.createCompletionQueue(1024, CompletionProgress.POLLER));
    QueuePair x = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqX, streamDepth, 1)));
    QueuePair y = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqY, 16, 1)));
    QueuePair v = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 16, 1)));
    QueuePair w = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 16, 1)));
    VerbsTestRig.connect(x, all, v, all);
    VerbsTestRig.connect(y, all, w, all);
    ResponderLoop hosted = ((SoftCompletionQueue) cqV).hostedLoop();
    WorkCompletion[] none = {new WorkCompletion()};
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (hosted.memberCount() < 2 && System.nanoTime() < until) {
      cqV.poll(none); // the moves are queued for the first poll: take them
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
    assertEquals(2, hosted.memberCount(), "both checked connections moved to the polled queue");
    return new Rig(cqX, cqY, cqV, x, y, v, w);
  }

  /**
   * The second queue pair's one request: Y's 64 B WRITE_WITH_IMM to W (whose receive is posted at
   * once), posted while the stream goes on; it must be placed and reported meanwhile.
   */
  private static final class SecondWrite {
    private final Rig r;
    private final MemoryRegion src;
    private final MemoryRegion dst;
    private boolean posted;

    SecondWrite(VerbsTestRig rig, Rig r) {
      this.r = r;
      src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      fill(src.buffer(), 64);
      dst = rig.register(rig.pdB, 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      r.w.postReceive(new ReceiveWorkRequest(1).wrId(7));
    }

    /** Posts the WRITE_WITH_IMM, the first time only. */
    void postOnce() {
      if (posted) {
        return;
      }
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(8)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .immData(SECOND_IMM)
              .remote(dst.address(), dst.rkey())
              .signaled(true);
      wr.sgl().set(src, 0, 64);
      r.y.postSend(wr);
      posted = true;
    }

    /** {@code wc}, polled from the shared queue, is W's receive of the write, which was placed. */
    void assertReported(WorkCompletion wc) {
      assertEquals(r.w.qpn(), wc.qpNum(), () -> "only the second queue pair reports: " + wc);
      assertEquals(WcStatus.SUCCESS, wc.status(), () -> "the second write: " + wc);
      assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode(), () -> "the second write: " + wc);
      assertEquals(SECOND_IMM, wc.immData(), () -> "the second write: " + wc);
      assertEquals(-1, src.buffer().mismatch(dst.buffer()), "second write placed");
    }
  }

  /**
   * The streaming peer's posting thread. If a test fails before it has posted everything, it stays
   * blocked on the full socket until the rig closes its queue pair, which ends it.
   */
  private static final class Stream {
    private final Thread thread;
    private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

    Stream(Runnable post) {
      thread =
          new Thread(
              () -> {
                try {
                  post.run();
                } catch (RuntimeException e) {
                  errors.add(e);
                }
              },
              "test-stream");
      thread.setDaemon(true);
      thread.start();
    }

    /**
     * Waits (bounded) until the posting thread blocks on its full socket or has posted it all: the
     * connection then holds as much of the stream as the kernel takes.
     */
    void awaitSocketFull() {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      while (System.nanoTime() < until) {
        Thread.State s = thread.getState();
        if (s == Thread.State.TIMED_WAITING
            || s == Thread.State.WAITING
            || s == Thread.State.TERMINATED) {
          return;
        }
        Thread.onSpinWait();
      }
    }

    void join() {
      try {
        thread.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      assertFalse(thread.isAlive(), "the streaming peer did not finish posting");
      assertNoFailure();
    }

    void assertNoFailure() {
      assertTrue(errors.isEmpty(), () -> "the streaming peer failed: " + errors);
    }
  }
}
