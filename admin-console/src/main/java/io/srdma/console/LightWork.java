package io.srdma.console;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * Light requests — the overview, stats, sessions, peers, regions, grants, the policy in force, the
 * fleet view and {@code /metrics} — run on Vert.x's shared worker pool ({@value
 * io.vertx.core.VertxOptions#DEFAULT_WORKER_POOL_SIZE} threads), at most {@value #MAX_PER_USER} of
 * one user's at once (over all the user's sessions; {@code /metrics} scrapers with the bearer token
 * count as one user). A user's further ones wait, in order, in a queue of that user's own and start
 * as its earlier ones end; one whose client has gone meanwhile is dropped unrun. So a user flooding
 * light routes while the host or etcd is slow (a stuck session list, an unreachable etcd behind the
 * fleet view: each call waits out its own timeout) holds at most {@value #MAX_PER_USER} of the
 * pool's threads, and everyone else's light requests are served by the others, never queued behind
 * the flood. Nothing is refused: a queue holds at most one request per connection of its user
 * (HTTP/1.1), and connections are bounded ({@link ConnectionLimit}).
 *
 * <p>Thread-safe; {@link #run} is called on the event loop.
 */
final class LightWork {
  /** Light requests of one user running on the shared pool at once. */
  static final int MAX_PER_USER = 4;

  /** The lane of requests without a login user: {@code /metrics} with the bearer token. */
  private static final String NO_USER = "";

  private final Map<String, Lane> lanes = new HashMap<>();

  /**
   * Runs light work for a request on Vert.x's shared worker pool as soon as its user has a place,
   * then {@code then} on the event loop; a failure fails the request.
   */
  <T> void run(RoutingContext ctx, Callable<T> work, Consumer<T> then) {
    Blocking.answer(ctx, call(ctx, work), then);
  }

  /**
   * Runs light work for a request (one of its event stream's snapshots, say) on Vert.x's shared
   * worker pool as soon as its user has a place; the result comes on the event loop.
   */
  <T> Future<T> call(RoutingContext ctx, Callable<T> work) {
    String user = AuthRoutes.user(ctx);
    ConsoleSessions.Session s = ConsoleSessions.of(ctx);
    String key = user != null ? user : s != null ? s.user : NO_USER;
    Promise<T> result = Promise.promise();
    Runnable task =
        () -> ctx.vertx().executeBlocking(work, false).andThen(ar -> done(key)).onComplete(result);
    if (admit(key, ctx, task)) {
      task.run();
    }
    return result.future();
  }

  /** Light requests of a user running or queued now (tests). */
  synchronized int held(String user) {
    Lane lane = lanes.get(user);
    return lane == null ? 0 : lane.running + lane.waiting.size();
  }

  /**
   * Takes a place of the user's now (true: run it), or queues the task behind the user's others.
   */
  private synchronized boolean admit(String key, RoutingContext ctx, Runnable task) {
    Lane lane = lanes.computeIfAbsent(key, k -> new Lane());
    if (lane.running < MAX_PER_USER) {
      lane.running++;
      return true;
    }
    lane.waiting.add(new Waiting(ctx, task));
    return false;
  }

  /** A user's light request ended: the user's next one still wanted runs in its place. */
  private void done(String key) {
    Runnable next = next(key);
    if (next != null) {
      next.run();
    }
  }

  private synchronized Runnable next(String key) {
    Lane lane = lanes.get(key);
    if (lane == null) {
      return null;
    }
    Waiting w;
    while ((w = lane.waiting.poll()) != null) {
      if (!w.ctx.response().closed() && !w.ctx.response().ended()) {
        return w.task; // keeps the place
      }
    }
    if (--lane.running == 0) {
      lanes.remove(key);
    }
    return null;
  }

  private record Waiting(RoutingContext ctx, Runnable task) {}

  /** One user's light requests: how many run, and those waiting for a place. */
  private static final class Lane {
    int running;
    final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  }
}
