package io.srdma.bench.transport;

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
  void eachWaitStartsItsOwnBusyTime() {
    SenderWait w = new SenderWait();
    w.start();
    while (w.stayBusy()) {
      Thread.onSpinWait();
    }
    w.start();
    assertTrue(w.stayBusy(), "a new wait looks again");
  }
}
