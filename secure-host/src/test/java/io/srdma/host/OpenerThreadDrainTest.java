package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A drain of an idle opener (a RELEASE of a WRITE grant, a session's end: both on a shared worker)
 * waits for at most the one wait the opener is in, not for a second: while a drain waits, the
 * opener polls instead of waiting again.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class OpenerThreadDrainTest {
  /** An empty queue whose await sleeps its whole timeout, counting the awaits that returned. */
  private static final class EmptyQueue implements CompletionQueue {
    final AtomicInteger awaits = new AtomicInteger();

    @Override
    public int capacity() {
      return 64;
    }

    @Override
    public int poll(WorkCompletion[] out) {
      return 0;
    }

    @Override
    public int await(WorkCompletion[] out, Duration timeout) {
      try {
        Thread.sleep(timeout.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      awaits.incrementAndGet();
      return 0;
    }

    @Override
    public void close() {}
  }

  @Test
  void shouldDrainAnIdleOpenerWithinTheWaitItIsIn() throws Exception {
    EmptyQueue queue = new EmptyQueue();
    OpenerThread opener = new OpenerThread("srdma-test-opener", queue, 1024);
    opener.start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (queue.awaits.get() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(1); // idle: past its spin, in its waits
      }
      assertTrue(queue.awaits.get() >= 2, "the idle opener waits on its queue");
      for (int i = 0; i < 20; i++) {
        int before = queue.awaits.get();
        opener.drain(Duration.ofSeconds(10));
        int waited = queue.awaits.get() - before; // the wait it was in, if any, and no other
        assertTrue(waited <= 1, "drain " + i + " waited for " + waited + " of the opener's waits");
      }
    } finally {
      opener.stop();
      opener.thread().join(5_000);
    }
  }
}
