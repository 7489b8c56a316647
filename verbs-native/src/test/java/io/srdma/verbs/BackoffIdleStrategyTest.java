package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BackoffIdleStrategyTest {

  @Test
  void shouldSpinThenYieldThenAskToBlockAndStartOverAfterWork() {
    BackoffIdleStrategy idle = new BackoffIdleStrategy(3, 2, 1_000, 10_000);
    for (int i = 0; i < 5; i++) {
      assertFalse(idle.shouldBlock(), "step " + i + " is still a spin or a yield");
      idle.idle(0);
    }
    assertTrue(idle.shouldBlock());
    idle.idle(); // parks about a microsecond
    idle.idle(1);
    assertFalse(idle.shouldBlock(), "work resets the back-off");
  }

  @Test
  void shouldRefuseBoundsOutOfRange() {
    assertThrows(IllegalArgumentException.class, () -> new BackoffIdleStrategy(-1, 0, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new BackoffIdleStrategy(0, -1, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new BackoffIdleStrategy(0, 0, 0, 1));
    assertThrows(IllegalArgumentException.class, () -> new BackoffIdleStrategy(0, 0, 10, 5));
  }
}
