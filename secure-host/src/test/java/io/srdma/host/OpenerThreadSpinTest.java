package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An opener whose completions come in bursts far apart (longer than a spin bridges) stops spinning
 * into the gaps: after a few, each gap costs it one empty poll and a wait, not a spin.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OpenerThreadSpinTest {
  /** Hands out completions the test adds; counts polls and awaits. */
  private static final class SparseQueue implements CompletionQueue {
    final AtomicLong polls = new AtomicLong();
    final AtomicLong awaits = new AtomicLong();
    private int pending; // guarded by this

    synchronized void add() {
      pending++;
      notifyAll();
    }

    /** Waits (bounded) until the opener has taken every completion added. */
    synchronized void awaitTaken() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (pending > 0 && System.nanoTime() < deadline) {
        wait(1);
      }
      assertTrue(pending == 0, "the opener did not take its completions");
    }

    private synchronized int take(WorkCompletion[] out) {
      if (pending == 0) {
        return 0;
      }
      pending--;
      out[0].set(1, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0, true, 0, 7); // no receiver
      return 1;
    }

    @Override
    public int capacity() {
      return 64;
    }

    @Override
    public int poll(WorkCompletion[] out) {
      polls.incrementAndGet();
      return take(out);
    }

    @Override
    public int await(WorkCompletion[] out, Duration timeout) {
      awaits.incrementAndGet();
      synchronized (this) {
        if (pending == 0) {
          try {
            wait(Math.max(1, timeout.toMillis()));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
      return take(out);
    }

    @Override
    public void close() {}
  }

  @Test
  void shouldStopSpinningIntoGapsNoSpinBridges() throws Exception {
    SparseQueue queue = new SparseQueue();
    OpenerThread opener = new OpenerThread("srdma-test-opener", queue, 1024);
    opener.start();
    try {
      // the gaps are the stimulus: 3 ms each, 60 times the spin, past any bridge
      for (int i = 0; i < 40; i++) {
        Thread.sleep(3);
        queue.add();
        queue.awaitTaken();
      }
      long polls = queue.polls.get();
      long awaits = queue.awaits.get();
      for (int i = 0; i < 20; i++) {
        Thread.sleep(3); // a gap
        queue.add();
        queue.awaitTaken();
      }
      long pollsPerGap = (queue.polls.get() - polls) / 20;
      long awaitsInGaps = queue.awaits.get() - awaits;
      // a spin of 50 µs polls hundreds of times; past it, a gap is one empty poll, then the wait
      assertTrue(pollsPerGap <= 8, pollsPerGap + " polls per gap: still spinning");
      assertTrue(awaitsInGaps >= 20, "waited " + awaitsInGaps + " times in 20 gaps");
    } finally {
      opener.stop();
      opener.thread().join(5_000);
    }
  }
}
