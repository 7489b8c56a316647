package io.srdma.console;

import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * Runs backend and file work on a worker thread, then answers on the event loop. Light routes run
 * theirs through {@link LightWork}, heavy ones through {@link HeavyWork}.
 */
final class Blocking {
  private Blocking() {}

  /**
   * Runs work on a given executor, e.g. a one-thread one that runs its tasks one after another:
   * work waiting for its turn is a queued task, not a parked thread.
   */
  static <T> void run(
      RoutingContext ctx, WorkerExecutor executor, Callable<T> work, Consumer<T> then) {
    answer(ctx, executor.executeBlocking(work, true), then);
  }

  /**
   * Runs work on a given pool, unordered: tasks run side by side on its threads, none waits for
   * another to end (the console's pool for logins, logouts and revokes).
   */
  static <T> void runOn(
      RoutingContext ctx, WorkerExecutor executor, Callable<T> work, Consumer<T> then) {
    answer(ctx, executor.executeBlocking(work, false), then);
  }

  /** Answers a request with work's result on the event loop, or fails it with its failure. */
  static <T> void answer(RoutingContext ctx, Future<T> result, Consumer<T> then) {
    result.onComplete(
        ar -> {
          if (ar.failed()) {
            ctx.fail(ar.cause());
            return;
          }
          try {
            then.accept(ar.result());
          } catch (RuntimeException e) {
            ctx.fail(e);
          }
        });
  }
}
