package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The spin verdict follows the share of recent idle gaps a spin would have bridged. */
class SpinAdvisorTest {
  private static final long SPIN = 50_000;

  @Test
  void shouldSpinUntilLongGapsDominate() {
    SpinAdvisor advisor = new SpinAdvisor(SPIN);
    assertTrue(advisor.shouldSpin(), "a fresh poller spins");
    int gaps = 0;
    while (advisor.shouldSpin()) {
      advisor.gapEnded(300_000); // a writer's bursts: 300 µs between them
      gaps++;
      assertTrue(gaps < 100, "long gaps never stopped the spin");
    }
    // (15/16)^k < 1/2 from k = 11: one long gap does not switch it, a run of them does
    assertEquals(11, gaps);
  }

  @Test
  void shouldSpinAgainOnceShortGapsReturn() {
    SpinAdvisor advisor = new SpinAdvisor(SPIN);
    for (int i = 0; i < 64; i++) {
      advisor.gapEnded(1_000_000);
    }
    assertFalse(advisor.shouldSpin());
    int gaps = 0;
    while (!advisor.shouldSpin()) {
      advisor.gapEnded(20_000); // one message at a time: 20 µs between them
      gaps++;
      assertTrue(gaps < 100, "short gaps never brought the spin back");
    }
    assertTrue(gaps <= 12, "took " + gaps + " short gaps to spin again");
  }

  @Test
  void shouldCountAGapUpToTheBridgeFactorAsBridged() {
    SpinAdvisor advisor = new SpinAdvisor(SPIN);
    for (int i = 0; i < 200; i++) {
      advisor.gapEnded(SPIN * SpinAdvisor.BRIDGE_FACTOR); // a parked poller's wake-up included
    }
    assertTrue(advisor.shouldSpin());
    assertEquals(1.0, advisor.bridgedShare(), 1e-9);
    for (int i = 0; i < 200; i++) {
      advisor.gapEnded(SPIN * SpinAdvisor.BRIDGE_FACTOR + 1);
    }
    assertFalse(advisor.shouldSpin());
    assertTrue(advisor.bridgedShare() < 1e-3);
  }

  @Test
  void shouldRejectANonPositiveSpin() {
    assertThrows(IllegalArgumentException.class, () -> new SpinAdvisor(0));
    assertThrows(IllegalArgumentException.class, () -> new SpinAdvisor(-1));
  }
}
