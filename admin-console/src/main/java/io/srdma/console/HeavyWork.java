package io.srdma.console;

import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * Heavy requests — audit pages, export and verify (each reads the whole log), policy validate (a
 * text of up to 16 MiB) — run on their own pool of {@value #THREADS} threads named {@value
 * #EXECUTOR}, never on the worker pool that checks logins and revokes grants, and at most {@value
 * #MAX_PER_SESSION} at once per session, {@value #MAX_PER_USER} per user and {@value
 * #MAX_IN_FLIGHT} in all. One more is refused at once with 429 {@code heavy_busy} and {@code
 * Retry-After: 1}, so a logged-in user flooding them from many connections queues nothing in front
 * of anyone's login or an admin's revoke.
 *
 * <p>A place is taken on the event loop before the work is queued and given back when the work ends
 * (an export: when its last chunk is read or it is abandoned), whatever the client does meanwhile:
 * a client that hangs up does not free a place its work still holds.
 */
final class HeavyWork {
  /** Name (and thread-name prefix) of the heavy requests' worker pool. */
  static final String EXECUTOR = "srdma-console-heavy";

  /** Threads of the heavy requests' pool. */
  static final int THREADS = 4;

  /** Heavy requests one login session may have running at once (the audit page runs two). */
  static final int MAX_PER_SESSION = 2;

  /** Heavy requests one user may have running at once, over all the user's sessions. */
  static final int MAX_PER_USER = 4;

  /** Heavy requests running or queued at once, all users together. */
  static final int MAX_IN_FLIGHT = 16;

  private static final String WHAT = " heavy requests (audit pages, export, verify; validate)";

  /** Where {@link #admit} leaves a request's place for {@link #run}. */
  private static final String ADMITTED = "srdma.heavy.permit";

  private final WorkerExecutor executor;
  private final Map<ConsoleSessions.Session, Integer> bySession = new HashMap<>();
  private final Map<String, Integer> byUser = new HashMap<>();
  private int inFlight;

  /**
   * @param executor a pool of its own, e.g. {@code vertx.createSharedWorkerExecutor(EXECUTOR,
   *     THREADS)}; its owner closes it
   */
  HeavyWork(WorkerExecutor executor) {
    this.executor = executor;
  }

  /**
   * Runs heavy work for a logged-in request on the heavy pool, then {@code then} on the event loop;
   * 429 {@code heavy_busy} at once if the session, its user or the console is at its limit.
   */
  <T> void run(RoutingContext ctx, Callable<T> work, Consumer<T> then) {
    Permit admitted = ctx.get(ADMITTED);
    Permit p = admitted != null ? admitted : acquire(ctx);
    p.submitted = true;
    Blocking.answer(ctx, submit(p, work).andThen(ar -> p.release()), then);
  }

  /**
   * Handler of a heavy request with a body, before the body is read: takes its place now (429
   * {@code heavy_busy} at once, the body unread), for {@link #run} to use. The place is given back
   * when the work ends, or when the request ends before its work was queued (its body cut off).
   */
  void admit(RoutingContext ctx) {
    Permit p = acquire(ctx);
    ctx.put(ADMITTED, p);
    ctx.addEndHandler(
        ar -> {
          if (!p.submitted) {
            p.release();
          }
        });
    ctx.next();
  }

  /**
   * Runs one piece of a longer heavy request (an export's chunk) on the heavy pool under a place it
   * holds; the caller releases the place when the request ends.
   */
  <T> Future<T> submit(Permit held, Callable<T> work) {
    try {
      return executor.executeBlocking(work, false);
    } catch (RuntimeException e) {
      held.release(); // the pool is closed: the console is stopping
      throw e;
    }
  }

  /** Takes a place for a logged-in request, or refuses it with 429 {@code heavy_busy}. */
  synchronized Permit acquire(RoutingContext ctx) {
    ConsoleSessions.Session s = ConsoleSessions.of(ctx);
    String user = AuthRoutes.user(ctx);
    if (bySession.getOrDefault(s, 0) >= MAX_PER_SESSION) {
      throw busy("this session already runs " + MAX_PER_SESSION + WHAT + ", its most at once");
    }
    if (byUser.getOrDefault(user, 0) >= MAX_PER_USER) {
      throw busy(
          "user '" + user + "' already runs " + MAX_PER_USER + WHAT + " in all sessions, its most");
    }
    if (inFlight >= MAX_IN_FLIGHT) {
      throw busy("the console already runs " + MAX_IN_FLIGHT + WHAT + ", its most at once");
    }
    bySession.merge(s, 1, Integer::sum);
    byUser.merge(user, 1, Integer::sum);
    inFlight++;
    return new Permit(s, user);
  }

  /** Heavy requests running or queued now, all users together (tests). */
  synchronized int inFlight() {
    return inFlight;
  }

  private synchronized void release(Permit p) {
    if (p.released) {
      return;
    }
    p.released = true;
    bySession.computeIfPresent(p.session, (k, n) -> n > 1 ? n - 1 : null);
    byUser.computeIfPresent(p.user, (k, n) -> n > 1 ? n - 1 : null);
    inFlight--;
  }

  private static ApiException busy(String message) {
    ApiException e = new ApiException(429, "heavy_busy", message + "; try again when one ends");
    e.retryAfterSeconds = 1;
    return e;
  }

  /** A place taken by {@link #acquire}; {@link #release} gives it back, once. */
  final class Permit {
    private final ConsoleSessions.Session session;
    private final String user;
    private boolean released;
    private boolean submitted; // event loop only: its work was queued, which then gives it back

    private Permit(ConsoleSessions.Session session, String user) {
      this.session = session;
      this.user = user;
    }

    void release() {
      HeavyWork.this.release(this);
    }
  }
}
