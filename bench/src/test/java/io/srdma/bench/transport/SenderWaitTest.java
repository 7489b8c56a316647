package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SenderWaitTest {
  @Test
  void staysBusyForItsSpinsAndTheBusyTimeThenSaysBlock() {
    SenderWait w = new SenderWait();
    w.start();
    long t0 = System.nanoTime();
    for (int i = 0; i < SenderWait.SPINS; i++) {
      assertTrue(w.stayBusy(), "spin " + i);
    }
    while (w.stayBusy()) {
      Thread.onSpinWait();
    }
    long busy = System.nanoTime() - t0;
    assertTrue(busy >= SenderWait.BUSY_NANOS, "blocked after " + busy + " ns");
    assertFalse(w.stayBusy(), "still spent until started again");
  }

  @Test
  void afterALongWaitOnlyTheSpinsUntilAProbeFindsWaitsShortAgain() {
    SenderWait w = new SenderWait();
    long busy = waitOut(w); // a long wait: busy time spent
    assertTrue(busy >= SenderWait.BUSY_NANOS, busy + " ns");
    for (int i = 1; i < SenderWait.PROBE_EVERY; i++) {
      w.start();
      assertEquals(SenderWait.SPINS, looksUntilBlock(w), "long waits: spins only, wait " + i);
    }
    assertTrue(waitOut(w) >= SenderWait.BUSY_NANOS, "the probe is busy again");
    // a short wait (over within the spins) ends the long-wait mode at once
    w.start();
    w.stayBusy(); // satisfied: the caller returns without blocking
    w.start();
    assertTrue(looksUntilBlock(w) > SenderWait.SPINS, "short waits are busy again");
  }

  private static long waitOut(SenderWait w) {
    w.start();
    long t0 = System.nanoTime();
    while (w.stayBusy()) {
      Thread.onSpinWait();
    }
    return System.nanoTime() - t0;
  }

  private static int looksUntilBlock(SenderWait w) {
    int looks = 0;
    while (w.stayBusy()) {
      looks++;
    }
    return looks;
  }
}
