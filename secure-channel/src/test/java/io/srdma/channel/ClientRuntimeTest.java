package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The process's client control plane: shared, started by the first user, stopped by the last. */
class ClientRuntimeTest {
  private static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.isAlive() && t.getName().equals(name));
  }

  @Test
  void shouldShareOneRuntimeAndStopWithTheLastUser() throws Exception {
    ClientRuntime first = ClientRuntime.acquire();
    ClientRuntime second = ClientRuntime.acquire();
    try {
      assertSame(first, second);
      assertTrue(threadAlive(ClientRuntime.LOOP_NAME));
      CompletableFuture<String> ran = new CompletableFuture<>();
      assertTrue(first.execute(() -> ran.complete(Thread.currentThread().getName())));
      assertTrue(ran.get(10, TimeUnit.SECONDS).startsWith(ClientRuntime.WORKER_PREFIX));
      CompletableFuture<String> timed = new CompletableFuture<>();
      var unused =
          first
              .timer()
              .schedule(
                  () -> timed.complete(Thread.currentThread().getName()), 1, TimeUnit.MILLISECONDS);
      assertTrue(timed.get(10, TimeUnit.SECONDS).equals(ClientRuntime.TIMER_NAME));
    } finally {
      second.close();
    }
    assertTrue(ClientRuntime.isRunning(), "one user left");
    first.close();
    assertFalse(ClientRuntime.isRunning());
    assertFalse(threadAlive(ClientRuntime.LOOP_NAME), "the loop stopped (joined)");
    // a pool's threads end just after it reports termination
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (threadAlive(ClientRuntime.TIMER_NAME) && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertFalse(threadAlive(ClientRuntime.TIMER_NAME), "the timer stopped");
    assertFalse(first.execute(() -> {}), "a stopped runtime refuses work");
  }
}
