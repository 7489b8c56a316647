package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Acknowledgement coalescing on the soft provider: an unsignaled request asks for an ACK only every
 * {@link SoftQueuePair#ackEvery} requests (half a small send queue), and the responder answers one
 * cumulative ACK per read. What must not change: completions in order, every write placed before
 * the completion that covers it, and a lost connection completing nothing as successful that was
 * not acknowledged.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SoftAckCoalescingTest {
  private static final int SIZE = 64;

  @Test
  void shouldAskForAnAckEveryHalfASmallSendQueueAndEverySixteenOtherwise() {
    assertEquals(1, SoftQueuePair.ackEvery(1));
    assertEquals(1, SoftQueuePair.ackEvery(2));
    assertEquals(1, SoftQueuePair.ackEvery(3));
    assertEquals(2, SoftQueuePair.ackEvery(4));
    assertEquals(8, SoftQueuePair.ackEvery(17));
    assertEquals(SoftQueuePair.ACK_EVERY, SoftQueuePair.ackEvery(32));
    assertEquals(SoftQueuePair.ACK_EVERY, SoftQueuePair.ackEvery(4096));
  }

  /**
   * The bench's pattern on a send queue of {@code depth + 1}: post lists of every length up to the
   * window, every 8th signaled, WRITE_WITH_IMM into a ring. Every message lands in order with its
   * immediate, and every signaled completion comes in order, across batch boundaries that fall
   * anywhere relative to the ACK requests.
   */
  @Test
  void shouldCompleteInOrderAcrossPostListsOfEveryLength() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeSoft(rig);
      int depth = 16;
      int signalEvery = 8;
      QueuePair a =
          rig.track(
              rig.pdA.createQueuePair(
                  new QueuePairAttributes(rig.cqA, rig.cqA, depth + 1, 4, 1, 1)));
      QueuePair b =
          rig.track(
              rig.pdB.createQueuePair(new QueuePairAttributes(rig.cqB, rig.cqB, 4, depth, 1, 1)));
      VerbsTestRig.connect(a, AccessFlags.REMOTE_WRITE, b, AccessFlags.REMOTE_WRITE);
      MemoryRegion src = rig.register(rig.pdA, depth * SIZE, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, depth * SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      ByteBuffer srcMem = src.buffer();
      ByteBuffer dstMem = dst.buffer();
      ReceiveWorkRequest recv = new ReceiveWorkRequest(1);
      for (int i = 0; i < depth; i++) {
        b.postReceive(recv.wrId(i));
      }
      SendWorkRequest[] wrs = new SendWorkRequest[depth];
      for (int i = 0; i < depth; i++) {
        wrs[i] = new SendWorkRequest(1).opcode(WrOpcode.RDMA_WRITE_WITH_IMM);
      }
      WorkCompletion[] out = newCompletions(depth);
      long sent = 0;
      long delivered = 0;
      long sendDone = 0;
      // lengths 1..depth and back, so each batch starts at a different offset from the ACK points
      int[] lengths = {1, 2, 3, 5, 8, 13, 16, 7, 1, 9, 4, 16, 11, 6, 15, 10, 12, 14};
      for (int round = 0; round < 20; round++) {
        for (int len : lengths) {
          int count = len;
          for (int k = 0; k < count; k++) {
            long seq = sent + k;
            int slot = (int) (seq % depth);
            srcMem.putLong(slot * SIZE, seq);
            wrs[k]
                .wrId(seq)
                .immData((int) seq)
                .signaled(seq % signalEvery == signalEvery - 1)
                .remote(dst.address() + (long) slot * SIZE, dst.rkey());
            wrs[k].sgl().set(src, (long) slot * SIZE, SIZE);
          }
          a.postSend(wrs, count);
          sent += count;
          // drain: every message delivered in order, every signaled write completed in order
          while (delivered < sent) {
            int n = rig.cqB.await(out, VerbsTestRig.COMPLETION_WAIT);
            assertNotEquals(0, n, "no receive completion");
            for (int i = 0; i < n; i++) {
              WorkCompletion wc = out[i];
              assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
              assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode(), wc::toString);
              assertEquals((int) delivered, wc.immData(), "receives in order");
              int slot = (int) (delivered % depth);
              assertEquals(delivered, dstMem.getLong(slot * SIZE), "placed before completed");
              delivered++;
              b.postReceive(recv.wrId(slot));
            }
          }
          long signaledDue = sent / signalEvery;
          while (sendDone < signaledDue) {
            int n = rig.cqA.await(out, VerbsTestRig.COMPLETION_WAIT);
            assertNotEquals(0, n, "no send completion");
            for (int i = 0; i < n; i++) {
              WorkCompletion wc = out[i];
              assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
              assertEquals(sendDone * signalEvery + signalEvery - 1, wc.wrId(), "sends in order");
              sendDone++;
            }
          }
          // unsignaled leftovers are retired by later ACKs; the queue never fills
          if (sent % signalEvery != 0) {
            long pad = signalEvery - sent % signalEvery;
            for (int k = 0; k < pad; k++) {
              long seq = sent + k;
              int slot = (int) (seq % depth);
              srcMem.putLong(slot * SIZE, seq);
              wrs[k]
                  .wrId(seq)
                  .immData((int) seq)
                  .signaled(seq % signalEvery == signalEvery - 1)
                  .remote(dst.address() + (long) slot * SIZE, dst.rkey());
              wrs[k].sgl().set(src, (long) slot * SIZE, SIZE);
            }
            a.postSend(wrs, (int) pad);
            sent += pad;
            delivered = drainReceives(rig, b, recv, out, dstMem, delivered, sent, depth);
            int n = 0;
            while (n == 0) {
              n = rig.cqA.await(out, VerbsTestRig.COMPLETION_WAIT);
              assertNotEquals(0, n, "no send completion");
            }
            assertEquals(1, n);
            assertEquals(WcStatus.SUCCESS, out[0].status(), out[0]::toString);
            assertEquals(sent - 1, out[0].wrId(), "the pad's signaled write");
            sendDone++;
          }
        }
      }
    }
  }

  /**
   * The connection is lost while unsignaled writes wait for an ACK that was not asked for yet: a
   * WRITE_WITH_IMM finds no receive, so the responder stops there, and the peer's QP is destroyed.
   * Nothing that was not acknowledged may complete successfully, and everything outstanding
   * completes, in order.
   */
  @Test
  void shouldCompleteNothingUnacknowledgedAsSuccessWhenTheConnectionIsLost() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeSoft(rig);
      CompletionQueue cq = rig.cqA;
      QueuePair a =
          rig.track(rig.pdA.createQueuePair(new QueuePairAttributes(cq, cq, 17, 4, 1, 1)));
      QueuePair b = rig.pdB.createQueuePair(new QueuePairAttributes(rig.cqB, rig.cqB, 4, 4, 1, 1));
      VerbsTestRig.connect(a, AccessFlags.REMOTE_WRITE, b, AccessFlags.REMOTE_WRITE);
      MemoryRegion src = rig.register(rig.pdA, 8 * SIZE, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, 8 * SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      SendWorkRequest[] wrs = new SendWorkRequest[8];
      for (int i = 0; i < 8; i++) {
        // 0..2 plain WRITEs, unsignaled (no ACK asked: ackEvery is 8); 3 a WRITE_WITH_IMM that
        // finds no receive; 4..7 signaled WRITEs behind it
        wrs[i] =
            new SendWorkRequest(1)
                .wrId(i)
                .opcode(i == 3 ? WrOpcode.RDMA_WRITE_WITH_IMM : WrOpcode.RDMA_WRITE)
                .signaled(i >= 3)
                .remote(dst.address() + (long) i * SIZE, dst.rkey());
        wrs[i].sgl().set(src, (long) i * SIZE, SIZE);
      }
      a.postSend(wrs, 8);
      rig.expectNone(cq, java.time.Duration.ofMillis(200)); // the responder waits for a receive
      b.close(); // the peer's QP goes: its responder drops the connection
      // 0..2 were placed but never acknowledged (none asked for it): a failed QP flushes them
      // with an error too, as an RNIC flushes every outstanding WR, signaled or not
      for (long i = 0; i < 8; i++) {
        WorkCompletion wc = rig.awaitOne(cq);
        assertEquals(i, wc.wrId(), () -> "in order: " + wc);
        assertNotEquals(WcStatus.SUCCESS, wc.status(), () -> "never acknowledged: " + wc);
      }
    }
  }

  private static long drainReceives(
      VerbsTestRig rig,
      QueuePair b,
      ReceiveWorkRequest recv,
      WorkCompletion[] out,
      ByteBuffer dstMem,
      long delivered,
      long sent,
      int depth) {
    while (delivered < sent) {
      int n = rig.cqB.await(out, VerbsTestRig.COMPLETION_WAIT);
      assertNotEquals(0, n, "no receive completion");
      for (int i = 0; i < n; i++) {
        assertEquals(WcStatus.SUCCESS, out[i].status(), out[i]::toString);
        assertEquals((int) delivered, out[i].immData(), "receives in order");
        int slot = (int) (delivered % depth);
        assertEquals(delivered, dstMem.getLong(slot * SIZE), "placed before completed");
        delivered++;
        b.postReceive(recv.wrId(slot));
      }
    }
    return delivered;
  }

  private static void assumeSoft(VerbsTestRig rig) {
    assumeTrue(
        rig.ctxA instanceof SoftDeviceContext,
        "needs the soft provider (ACK coalescing is its wire protocol); this run uses "
            + rig.ctxA.getClass().getSimpleName());
  }

  private static WorkCompletion[] newCompletions(int n) {
    WorkCompletion[] wcs = new WorkCompletion[n];
    for (int i = 0; i < n; i++) {
      wcs[i] = new WorkCompletion();
    }
    return wcs;
  }
}
