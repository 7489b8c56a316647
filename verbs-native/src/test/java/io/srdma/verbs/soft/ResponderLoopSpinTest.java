package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/** A responder loop spins less after busy periods in which looking again found nothing. */
class ResponderLoopSpinTest {
  @Test
  void shouldHalveTheSpinBudgetWhileLookingAgainFindsNothing() throws IOException {
    ResponderLoop loop = new ResponderLoop("srdma-soft-resp-test");
    try {
      assertEquals(ResponderLoop.SPINS, loop.spinBudget());
      int[] expected = {10, 5, 2, 1, 1};
      for (int e : expected) {
        loop.spinAfterWork(); // an empty selector: nothing is ever found
        assertEquals(e, loop.spinBudget());
      }
    } finally {
      loop.shutdown();
      loop.selector().close(); // never started, so its run() does not close it
    }
  }
}
