package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompletionQueue#resize} ({@code ibv_resize_cq}): growing and shrinking with completions
 * queued keeps them in order, a size below them is refused without losing any, and the new size is
 * the one an overrun is judged against. Queue pair A writes to B on one device context; A's sends
 * complete on the CQ under test.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompletionQueueResizeContractTest {
  private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

  /** Long enough for every response of a few posted writes to have arrived. */
  private static final long SETTLE_MILLIS = 400;

  @Test
  void shouldKeepQueuedCompletionsInOrderWhenGrowing() throws InterruptedException {
    try (Pair p = new Pair(8, 64)) {
      p.write(0, 6);
      p.expectNext(0);
      Thread.sleep(SETTLE_MILLIS);
      p.expectNext(1); // soft: this poll reads the other responses into the queue: 4 queued
      p.cq.resize(64);
      assertEquals(64, p.cq.capacity());
      p.write(6, 40); // 44 queued at most: past the old capacity, within the new
      for (long i = 2; i < 46; i++) {
        p.expectNext(i);
      }
      p.expectNone();
    }
  }

  @Test
  void shouldRefuseToShrinkBelowTheQueuedCompletionsAndLoseNone() throws InterruptedException {
    try (Pair p = new Pair(16, 32)) {
      p.write(0, 6);
      p.expectNext(0);
      Thread.sleep(SETTLE_MILLIS);
      p.expectNext(1); // 4 queued
      VerbsException e = assertThrows(VerbsException.class, () -> p.cq.resize(2));
      assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason(), e::getMessage);
      assertEquals(16, p.cq.capacity());
      p.cq.resize(4); // exactly what is queued
      assertEquals(4, p.cq.capacity());
      for (long i = 2; i < 6; i++) {
        p.expectNext(i);
      }
      p.write(6, 4); // fits the new size exactly
      for (long i = 6; i < 10; i++) {
        p.expectNext(i);
      }
      p.expectNone();
    }
  }

  @Test
  void shouldRefuseCapacitiesOutsideTheDevicesRange() {
    try (Pair p = new Pair(8, 8)) {
      int max = p.ctx.queryDevice().maxCqe();
      for (int bad : new int[] {0, -1, max + 1}) {
        VerbsException e = assertThrows(VerbsException.class, () -> p.cq.resize(bad));
        assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason(), e::getMessage);
      }
      assertEquals(8, p.cq.capacity());
      p.write(0, 1);
      p.expectNext(0);
    }
  }

  @Test
  void shouldReportAnOverrunAtTheNewCapacity() throws InterruptedException {
    Assumptions.assumeFalse(
        "ibv".equals(TestProviders.name()),
        "rxe rounds a CQ's size up to 2^n - 1 and reports an overrun as an asynchronous event"
            + " (IBV_EVENT_CQ_ERR), not through ibv_poll_cq");
    try (Pair p = new Pair(64, 32)) {
      p.cq.resize(4);
      p.write(0, 6);
      WorkCompletion[] out = {new WorkCompletion()};
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      VerbsException overran = null;
      while (overran == null && System.nanoTime() < deadline) {
        try {
          p.cq.poll(out);
          Thread.sleep(5);
        } catch (VerbsException e) {
          overran = e;
        }
      }
      assertTrue(overran != null, "6 completions in a queue of 4 never overran it");
      assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, overran.reason());
    }
  }

  @Test
  void shouldKeepEveryCompletionWhileResizingUnderTraffic() throws InterruptedException {
    int writes = 2_000;
    try (Pair p = new Pair(128, 64)) {
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicLong consumed = new AtomicLong();
      Thread consumer =
          new Thread(
              () -> {
                try {
                  for (long i = 0; i < writes; i++) {
                    p.expectNext(i);
                    consumed.set(i + 1);
                  }
                } catch (Throwable t) {
                  failure.set(t);
                }
              },
              "resize-contract-consumer");
      consumer.start();
      Thread poster =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < writes; i++) {
                    // at most 64 not yet polled (loopback frees a send slot when it completes)
                    while (i - consumed.get() >= 64 && failure.get() == null) {
                      Thread.onSpinWait();
                    }
                    p.writeWhenRoom(i);
                  }
                } catch (Throwable t) {
                  failure.compareAndSet(null, t);
                }
              },
              "resize-contract-poster");
      poster.start();
      // never below the send depth (64): no resize is refused and none overruns
      for (int round = 0; consumer.isAlive() && round < 10_000; round++) {
        p.cq.resize(round % 2 == 0 ? 256 : 96);
        Thread.sleep(1);
      }
      poster.join(30_000);
      consumer.join(30_000);
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      assertTrue(!consumer.isAlive(), "the consumer did not see every completion");
    }
  }

  /** A and B connected on one device context; A's send completions go to {@link #cq}. */
  private static final class Pair implements AutoCloseable {
    final DeviceContext ctx;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final CompletionQueue cqB;
    final QueuePair a;
    final QueuePair b;
    final MemoryRegion src;
    final MemoryRegion dst;
    private final SendWorkRequest wr = new SendWorkRequest(1);
    private final WorkCompletion[] one = {new WorkCompletion()};

    Pair(int capacity, int sendDepth) {
      ctx = TestProviders.device().open(new DeviceOptions());
      pd = ctx.allocateProtectionDomain();
      cq = ctx.createCompletionQueue(capacity);
      cqB = ctx.createCompletionQueue(8);
      a = pd.createQueuePair(new QueuePairAttributes(cq, cq, sendDepth, 1, 1, 1));
      b = pd.createQueuePair(QueuePairAttributes.of(cqB, 4, 1));
      src = pd.registerMemory(ByteBuffer.allocateDirect(64), AccessFlags.LOCAL_WRITE);
      dst = pd.registerMemory(ByteBuffer.allocateDirect(64), RW);
      VerbsTestRig.connect(a, 0, b, AccessFlags.REMOTE_WRITE);
      wr.opcode(WrOpcode.RDMA_WRITE).remote(dst.address(), dst.rkey());
      wr.sgl().set(src, 0, 8);
    }

    /** Posts {@code count} signaled writes with identifiers from {@code first} on. */
    void write(long first, int count) {
      for (int i = 0; i < count; i++) {
        a.postSend(wr.wrId(first + i));
      }
    }

    /** Posts one write, retrying while the send queue is full (its completions free it). */
    void writeWhenRoom(long wrId) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (true) {
        try {
          a.postSend(wr.wrId(wrId));
          return;
        } catch (VerbsException e) {
          assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, e.reason(), e::getMessage);
          assertTrue(System.nanoTime() < deadline, "send queue never drained");
          Thread.onSpinWait();
        }
      }
    }

    /** Waits for the next completion; it must be a successful write {@code wrId}. */
    void expectNext(long wrId) {
      if (cq.await(one, VerbsTestRig.COMPLETION_WAIT) == 0) {
        fail("no completion for write " + wrId + " within " + VerbsTestRig.COMPLETION_WAIT);
      }
      assertEquals(wrId, one[0].wrId(), () -> "completion " + one[0]);
      assertEquals(WcStatus.SUCCESS, one[0].status(), () -> "completion " + one[0]);
      assertEquals(a.qpn(), one[0].qpNum(), () -> "completion " + one[0]);
    }

    void expectNone() {
      int n = cq.await(one, Duration.ofMillis(100));
      assertEquals(0, n, () -> "unexpected completion " + one[0]);
    }

    @Override
    public void close() {
      for (AutoCloseable c : new AutoCloseable[] {src, dst, a, b, cq, cqB, pd, ctx}) {
        try {
          c.close();
        } catch (Exception e) {
          throw new AssertionError("closing " + c, e);
        }
      }
    }
  }
}
