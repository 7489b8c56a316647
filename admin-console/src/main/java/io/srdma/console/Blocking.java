package io.srdma.console;

import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/** Runs backend and file work on a worker thread, then answers on the event loop. */
final class Blocking {
  private Blocking() {}

  static <T> void run(RoutingContext ctx, Callable<T> work, Consumer<T> then) {
    ctx.vertx()
        .executeBlocking(work, false)
        .onComplete(
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
