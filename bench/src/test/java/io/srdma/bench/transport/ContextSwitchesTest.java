package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

class ContextSwitchesTest {
  @Test
  void shouldCountTheSwitchesOfAThreadThatWaitedAndThenEnded() throws Exception {
    assumeTrue(
        ContextSwitches.total() >= 0,
        "getrusage(RUSAGE_SELF) is read on 64-bit Linux only; os.name="
            + System.getProperty("os.name"));
    long before = ContextSwitches.total();
    int sleeps = 200;
    Thread sleeper =
        new Thread(
            () -> {
              for (int i = 0; i < sleeps; i++) {
                LockSupport.parkNanos(50_000); // a timed wait: the thread leaves the CPU
              }
            },
            "context-switches-test-sleeper");
    sleeper.start();
    sleeper.join(10_000);
    assertFalse(sleeper.isAlive());
    long after = ContextSwitches.total();
    // Each timed wait is a voluntary switch; the thread has ended and its switches still count.
    assertTrue(after - before >= sleeps / 2, "switches " + before + " -> " + after);
    double perMessage = ContextSwitches.perMessage(before, after, sleeps);
    assertEquals((after - before) / (double) sleeps, perMessage, 1e-12);
  }

  @Test
  void shouldSayNothingWhenAReadingOrTheMessagesAreMissing() {
    assertTrue(Double.isNaN(ContextSwitches.perMessage(-1, 10, 5)));
    assertTrue(Double.isNaN(ContextSwitches.perMessage(5, 10, 0)));
    assertTrue(Double.isNaN(ContextSwitches.perMessage(10, 5, 5)));
    assertEquals(1.0, ContextSwitches.perMessage(5, 10, 5), 1e-12);
  }
}
