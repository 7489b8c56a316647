package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.QueuePair;
import io.srdma.verbs.VerbsException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The connector by hand, with queue pairs whose readyToSend waits for the test. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class QueuePairConnectorTest {
  private static final long FAR = TimeUnit.SECONDS.toNanos(60);

  private final CountDownLatch open = new CountDownLatch(1);
  private final List<String> started = new CopyOnWriteArrayList<>();
  private QueuePairConnector connector;

  @AfterEach
  void stop() {
    open.countDown();
    if (connector != null) {
      connector.close();
    }
  }

  /** A queue pair whose readyToSend records {@code name} and blocks until {@link #open}. */
  private QueuePair stalling(String name) {
    return stalling(name, open);
  }

  /** A queue pair whose readyToSend records {@code name} and blocks until {@code gate} opens. */
  private QueuePair stalling(String name, CountDownLatch gate) {
    return (QueuePair)
        Proxy.newProxyInstance(
            QueuePair.class.getClassLoader(),
            new Class<?>[] {QueuePair.class},
            (proxy, m, args) -> {
              if (m.getName().equals("readyToSend")) {
                started.add(name);
                if (!gate.await(20, TimeUnit.SECONDS)) {
                  throw new IllegalStateException("never opened");
                }
                return null;
              }
              if (m.getName().equals("toString")) {
                return name;
              }
              throw new UnsupportedOperationException(m.getName());
            });
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 10 s: " + what);
      Thread.sleep(2);
    }
  }

  @Test
  void shouldKeepEachTenantToItsShareAndServeTenantsInTurn() throws Exception {
    connector = new QueuePairConnector("test-connect-", 3, 2);
    CountDownLatch done = new CountDownLatch(6);
    for (int i = 0; i < 4; i++) {
      connector.connect("acme", stalling("acme-" + i), System.nanoTime() + FAR, done::countDown);
    }
    await(() -> connector.running("acme") == 2, "acme's share running");
    connector.connect("globex", stalling("globex-0"), System.nanoTime() + FAR, done::countDown);
    connector.connect("globex", stalling("globex-1"), System.nanoTime() + FAR, done::countDown);
    await(() -> connector.running() == 3, "every thread busy");
    assertEquals(1, connector.running("globex"), "the third thread went to globex");
    assertEquals(2, connector.running("acme"), "acme never above its share");
    assertEquals(3, connector.waiting());
    await(() -> started.size() == 3, "three started");
    assertEquals(Set.of("acme-0", "acme-1", "globex-0"), Set.copyOf(started), "in arrival order");
    open.countDown();
    assertTrue(done.await(10, TimeUnit.SECONDS), "all connected");
    await(() -> connector.running() == 0 && connector.waiting() == 0, "nothing left");
  }

  @Test
  void shouldNotStartAConnectWhoseDeadlinePassedWhileItWaited() throws Exception {
    connector = new QueuePairConnector("test-connect-", 1, 1);
    QueuePairConnector.Connect first =
        connector.connect("acme", stalling("first"), System.nanoTime() + FAR, () -> {});
    CountDownLatch done = new CountDownLatch(1);
    QueuePairConnector.Connect late =
        connector.connect(
            "acme",
            stalling("late"),
            System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50),
            done::countDown);
    Thread.sleep(100);
    open.countDown();
    assertTrue(done.await(10, TimeUnit.SECONDS));
    assertTrue(late.finished());
    assertTrue(late.failure() instanceof VerbsException, String.valueOf(late.failure()));
    assertEquals(List.of("first"), started, "the late one never ran");
    await(first::finished, "first connected");
    assertNull(first.failure());
  }

  @Test
  void shouldEndWaitingAndRunningConnectsWhenCancelled() throws Exception {
    connector = new QueuePairConnector("test-connect-", 1, 1);
    CountDownLatch runningDone = new CountDownLatch(1);
    CountDownLatch waitingDone = new CountDownLatch(1);
    QueuePairConnector.Connect running =
        connector.connect(
            "acme", stalling("running"), System.nanoTime() + FAR, runningDone::countDown);
    QueuePairConnector.Connect waiting =
        connector.connect(
            "globex", stalling("waiting"), System.nanoTime() + FAR, waitingDone::countDown);
    await(() -> started.size() == 1, "the first runs");
    waiting.cancel();
    assertTrue(waitingDone.await(1, TimeUnit.SECONDS), "a waiting connect ends at once");
    assertTrue(waiting.failure() instanceof VerbsException);
    running.cancel(); // interrupts readyToSend: the open.await throws
    assertTrue(runningDone.await(5, TimeUnit.SECONDS), "a running connect ends on cancel");
    assertTrue(running.failure() != null, "interrupted: not connected");
    assertEquals(List.of("running"), started);
    await(() -> connector.running() == 0, "its thread is free");
    // the thread that was interrupted serves the next connect normally
    open.countDown();
    CountDownLatch next = new CountDownLatch(1);
    QueuePairConnector.Connect c =
        connector.connect("acme", stalling("next"), System.nanoTime() + FAR, next::countDown);
    assertTrue(next.await(5, TimeUnit.SECONDS));
    assertNull(c.failure());
  }

  /**
   * A connect that comes while the only thread still runs the last connect's done waits for that
   * thread (the slot is free only once the thread is), never refused as if the host were closing.
   */
  @Test
  void shouldStartAConnectQueuedWhileTheFreedThreadStillRunsItsDone() throws Exception {
    connector = new QueuePairConnector("test-connect-", 1, 1);
    open.countDown();
    CountDownLatch inDone = new CountDownLatch(1);
    CountDownLatch leaveDone = new CountDownLatch(1);
    connector.connect(
        "acme",
        stalling("first"),
        System.nanoTime() + FAR,
        () -> {
          inDone.countDown();
          try {
            leaveDone.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertTrue(inDone.await(5, TimeUnit.SECONDS));
    assertEquals(1, connector.running(), "the slot is held while done runs");
    CountDownLatch secondDone = new CountDownLatch(1);
    QueuePairConnector.Connect second =
        connector.connect(
            "globex", stalling("second"), System.nanoTime() + FAR, secondDone::countDown);
    assertTrue(!second.finished() || second.failure() == null, String.valueOf(second.failure()));
    leaveDone.countDown();
    assertTrue(secondDone.await(5, TimeUnit.SECONDS), "the second ran once the thread was back");
    assertNull(second.failure());
    assertEquals(List.of("first", "second"), started);
  }

  @Test
  void shouldServeConnectsOneAfterAnotherOnOneThreadAndKeepToTheBound() throws Exception {
    connector = new QueuePairConnector("test-connect-", 3, 3);
    open.countDown();
    for (int i = 0; i < 5; i++) {
      CountDownLatch done = new CountDownLatch(1);
      connector.connect("acme", stalling("s" + i), System.nanoTime() + FAR, done::countDown);
      assertTrue(done.await(5, TimeUnit.SECONDS));
      await(() -> connector.threads()[1] == 1, "the thread idle again");
    }
    assertEquals(1, connector.threads()[0], "an idle thread takes the next connect");
    CountDownLatch stall = new CountDownLatch(1);
    CountDownLatch all = new CountDownLatch(6);
    for (int i = 0; i < 6; i++) {
      connector.connect(
          "acme", stalling("burst" + i, stall), System.nanoTime() + FAR, all::countDown);
    }
    await(() -> connector.running() == 3, "three running");
    assertEquals(3, connector.threads()[0], "never more threads than the bound");
    stall.countDown();
    assertTrue(all.await(10, TimeUnit.SECONDS), "all six connected");
    await(() -> connector.running() == 0 && connector.waiting() == 0, "nothing left");
    assertTrue(connector.threads()[0] <= 3);
  }

  @Test
  void shouldRefuseAfterCloseAndNameItsThreads() throws Exception {
    connector = new QueuePairConnector("test-connect-", 2, 1);
    CountDownLatch done = new CountDownLatch(2);
    connector.connect("acme", stalling("a"), System.nanoTime() + FAR, done::countDown);
    await(() -> started.size() == 1, "runs");
    assertTrue(
        Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> t.getName().equals("test-connect-0") && t.isDaemon()),
        "a named daemon thread");
    connector.connect("acme", stalling("b"), System.nanoTime() + FAR, done::countDown);
    connector.close();
    assertTrue(done.await(5, TimeUnit.SECONDS), "the running one cancelled, the waiting one ended");
    QueuePairConnector.Connect after =
        connector.connect("acme", stalling("c"), System.nanoTime() + FAR, () -> {});
    assertTrue(after.finished());
    assertTrue(after.failure() instanceof VerbsException);
    assertEquals(List.of("a"), started);
    assertThrows(IllegalArgumentException.class, () -> new QueuePairConnector("x-", 1, 2));
  }
}
