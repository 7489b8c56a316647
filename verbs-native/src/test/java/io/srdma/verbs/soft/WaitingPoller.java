package io.srdma.verbs.soft;

import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

/**
 * Runs a poll on a thread of its own and returns once that thread blocks (parked on a queue without
 * a selector, or in {@code epoll_wait} with one), so a test can post what must wake a sleeping
 * poller, not a spinning one. Returns after 10 s at most even if it never blocks.
 */
final class WaitingPoller {
  private WaitingPoller() {}

  static <T> FutureTask<T> start(String name, Callable<T> poll) {
    FutureTask<T> task = new FutureTask<>(poll);
    Thread t = new Thread(task, name);
    t.setDaemon(true);
    t.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline && !task.isDone()) {
      Thread.State state = t.getState();
      if (state == Thread.State.TIMED_WAITING
          || (state == Thread.State.RUNNABLE && isSelecting(t))) {
        break;
      }
      Thread.onSpinWait();
    }
    return task;
  }

  private static boolean isSelecting(Thread t) {
    for (StackTraceElement e : t.getStackTrace()) {
      if (e.getMethodName().equals("select") || e.getMethodName().equals("doSelect")) {
        return true;
      }
    }
    return false;
  }
}
