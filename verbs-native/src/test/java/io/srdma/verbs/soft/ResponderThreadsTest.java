package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The soft responders run on a fixed pool of selector threads, not a thread per queue pair. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ResponderThreadsTest {
  private static final int PAIRS = 64;
  private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

  private static long softThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith("srdma-soft-"))
        .count();
  }

  @Test
  void shouldServeManyQueuePairsOnAFixedNumberOfThreads() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      long withOnePair = softThreads();
      CompletionQueue cqA = rig.track(rig.ctxA.createCompletionQueue(4 * PAIRS));
      CompletionQueue cqB = rig.track(rig.ctxB.createCompletionQueue(4 * PAIRS));
      List<QueuePair> senders = new ArrayList<>();
      for (int i = 0; i < PAIRS; i++) {
        QueuePair a = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqA, 4, 1)));
        QueuePair b = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqB, 4, 1)));
        VerbsTestRig.connect(a, AccessFlags.REMOTE_WRITE, b, AccessFlags.REMOTE_WRITE);
        senders.add(a);
      }
      // Every connection is served: one WRITE over each lands.
      MemoryRegion src = rig.register(rig.pdA, PAIRS, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, PAIRS, RW);
      for (int i = 0; i < PAIRS; i++) {
        src.buffer().put(i, (byte) (i + 1));
        rig.write(senders.get(i), i, src, i, 1, dst.address() + i, dst.rkey());
      }
      boolean[] done = new boolean[PAIRS];
      for (int i = 0; i < PAIRS; i++) {
        var wc = rig.awaitOne(cqA);
        assertEquals(WcStatus.SUCCESS, wc.status(), () -> "completion " + wc);
        done[(int) wc.wrId()] = true;
      }
      boolean[] all = new boolean[PAIRS];
      java.util.Arrays.fill(all, true);
      assertArrayEquals(all, done);
      for (int i = 0; i < PAIRS; i++) {
        assertEquals((byte) (i + 1), dst.buffer().get(i));
      }
      long withManyPairs = softThreads();
      assertEquals(
          withOnePair,
          withManyPairs,
          () ->
              PAIRS
                  + " more connected pairs added threads: "
                  + withOnePair
                  + " -> "
                  + withManyPairs);
      // Per context: acceptor, timer and the responder loops.
      assertTrue(
          withManyPairs <= 2L * (2 + SoftDeviceContext.RESPONDER_THREADS),
          () -> "soft threads of two contexts: " + withManyPairs);
    }
  }
}
