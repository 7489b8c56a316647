package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
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
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A responder pushes a read batch's receive completions without waking the CQ's poller and wakes a
 * sleeping poller once for the run; its loop spins less after busy periods in which looking again
 * found nothing. What must not change: no wake-up is lost (a poller asleep in {@code await} gets
 * every completion long before its timeout), completions come in order, each placed before it is
 * completed, and a request refused in the middle of a batch still reports those before it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SoftReceiveBatchTest {
  private static final int SIZE = 64;
  private static final int DEPTH = 16;

  /** Far longer than a wake-up takes: a poller still asleep at the end of it missed one. */
  private static final Duration LONG_AWAIT = Duration.ofSeconds(20);

  @Test
  void shouldWakeASleepingPollerForEveryRunOfReceiveCompletionsInOrder() throws Exception {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeSoft(rig);
      QueuePair a =
          rig.track(
              rig.pdA.createQueuePair(
                  new QueuePairAttributes(rig.cqA, rig.cqA, DEPTH + 1, 4, 1, 1)));
      QueuePair b =
          rig.track(
              rig.pdB.createQueuePair(new QueuePairAttributes(rig.cqB, rig.cqB, 4, DEPTH, 1, 1)));
      VerbsTestRig.connect(a, AccessFlags.REMOTE_WRITE, b, AccessFlags.REMOTE_WRITE);
      MemoryRegion src = rig.register(rig.pdA, DEPTH * SIZE, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, DEPTH * SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      ByteBuffer srcMem = src.buffer();
      ByteBuffer dstMem = dst.buffer();
      ReceiveWorkRequest recv = new ReceiveWorkRequest(1);
      for (int i = 0; i < DEPTH; i++) {
        b.postReceive(recv.wrId(i));
      }
      SendWorkRequest[] wrs = newWrites(src, dst);
      WorkCompletion[] out = newCompletions(2 * DEPTH);
      long delivered = 0;
      for (int round = 0; round < 30; round++) {
        int count = 1 + round % DEPTH;
        long first = delivered;
        // The poller goes to sleep (past its spins and yields) before the batch is posted.
        FutureTask<Long> polled =
            WaitingPoller.start(
                "batch-test-poller", () -> drain(rig, b, recv, out, dstMem, first, first + count));
        for (int k = 0; k < count; k++) {
          long seq = first + k;
          int slot = (int) (seq % DEPTH);
          srcMem.putLong(slot * SIZE, seq);
          wrs[k]
              .wrId(seq)
              .immData((int) seq)
              .signaled(k == count - 1)
              .remote(dst.address() + (long) slot * SIZE, dst.rkey());
          wrs[k].sgl().set(src, (long) slot * SIZE, SIZE);
        }
        long postedAt = System.nanoTime();
        a.postSend(wrs, count);
        delivered = polled.get(LONG_AWAIT.toSeconds() + 5, TimeUnit.SECONDS);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - postedAt);
        assertTrue(tookMs < 5_000, () -> "a sleeping poller woke only after " + tookMs + " ms");
        WorkCompletion wc = rig.awaitOne(rig.cqA);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(first + count - 1, wc.wrId());
      }
    }
  }

  /**
   * Request 5 of a batch of 8 names an rkey the target does not have: receives 0..4 complete with
   * success, in order, before anything else; the refused one and the rest fail, and a poller asleep
   * on the receive CQ is woken for all of them.
   */
  @Test
  void shouldReportTheRunBeforeARefusedRequestAndWakeThePoller() throws Exception {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeSoft(rig);
      QueuePair a =
          rig.track(
              rig.pdA.createQueuePair(
                  new QueuePairAttributes(rig.cqA, rig.cqA, DEPTH + 1, 4, 1, 1)));
      QueuePair b =
          rig.track(
              rig.pdB.createQueuePair(new QueuePairAttributes(rig.cqB, rig.cqB, 4, DEPTH, 1, 1)));
      VerbsTestRig.connect(a, AccessFlags.REMOTE_WRITE, b, AccessFlags.REMOTE_WRITE);
      MemoryRegion src = rig.register(rig.pdA, DEPTH * SIZE, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, DEPTH * SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      ReceiveWorkRequest recv = new ReceiveWorkRequest(1);
      for (int i = 0; i < 8; i++) {
        b.postReceive(recv.wrId(i));
      }
      SendWorkRequest[] wrs = newWrites(src, dst);
      for (int k = 0; k < 8; k++) {
        int rkey = k == 5 ? dst.rkey() ^ 0x5a5a_0000 : dst.rkey();
        wrs[k].wrId(k).immData(k).signaled(true).remote(dst.address() + (long) k * SIZE, rkey);
        wrs[k].sgl().set(src, (long) k * SIZE, SIZE);
      }
      WorkCompletion[] out = newCompletions(2 * DEPTH);
      FutureTask<int[]> polled =
          WaitingPoller.start(
              "batch-test-poller",
              () -> {
                int[] statuses = new int[8];
                int got = 0;
                while (got < 8) {
                  int n = rig.cqB.await(out, LONG_AWAIT);
                  if (n == 0) {
                    throw new AssertionError("receive completions lost after " + got);
                  }
                  for (int i = 0; i < n && got < 8; i++) { // the rest: the 8 posted again
                    assertEquals(got, out[i].wrId(), out[i]::toString);
                    statuses[got++] = out[i].status() == WcStatus.SUCCESS ? 1 : 0;
                  }
                }
                return statuses;
              });
      for (int k = 0; k < 8; k++) {
        b.postReceive(recv.wrId(k)); // wrIds 0..7 again: the queue holds 8 more, reported later
      }
      a.postSend(wrs, 8);
      int[] statuses = polled.get(LONG_AWAIT.toSeconds() + 5, TimeUnit.SECONDS);
      assertEquals("[1, 1, 1, 1, 1, 0, 0, 0]", Arrays.toString(statuses));
      for (int k = 0; k < 5; k++) {
        assertEquals(WcStatus.SUCCESS, rig.awaitOne(rig.cqA).status());
      }
      WorkCompletion refused = rig.awaitOne(rig.cqA);
      assertEquals(5, refused.wrId());
      assertEquals(WcStatus.REM_ACCESS_ERR, refused.status(), refused::toString);
    }
  }

  private static long drain(
      VerbsTestRig rig,
      QueuePair b,
      ReceiveWorkRequest recv,
      WorkCompletion[] out,
      ByteBuffer dstMem,
      long delivered,
      long until) {
    long next = delivered;
    while (next < until) {
      int n = rig.cqB.await(out, LONG_AWAIT);
      if (n == 0) {
        throw new AssertionError("no receive completion within " + LONG_AWAIT + " at " + next);
      }
      for (int i = 0; i < n; i++) {
        WorkCompletion wc = out[i];
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode(), wc::toString);
        assertEquals((int) next, wc.immData(), "receives in order");
        int slot = (int) (next % DEPTH);
        assertEquals(next, dstMem.getLong(slot * SIZE), "placed before completed");
        next++;
        b.postReceive(recv.wrId(slot));
      }
    }
    return next;
  }

  private static SendWorkRequest[] newWrites(MemoryRegion src, MemoryRegion dst) {
    SendWorkRequest[] wrs = new SendWorkRequest[DEPTH];
    for (int i = 0; i < DEPTH; i++) {
      wrs[i] =
          new SendWorkRequest(1)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .remote(dst.address(), dst.rkey());
      wrs[i].sgl().set(src, 0, SIZE);
    }
    return wrs;
  }

  private static void assumeSoft(VerbsTestRig rig) {
    assumeTrue(
        rig.ctxA instanceof SoftDeviceContext,
        "needs the soft provider (its responder's completion batches); this run uses "
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
