package io.srdma.console;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Map;

/**
 * Bounds the request bodies the console buffers at once, in the host's JVM. A logged-in route that
 * takes a body reserves its whole length — the {@code Content-Length}, or {@value #MAX_BODY_BYTES}
 * bytes for a chunked body — before a byte of it is read, and gives it back when the request ends
 * (answered, failed or cut off). At most {@value #PER_SESSION_BYTES} bytes per session (one body of
 * the largest size, or several smaller ones), {@value #PER_USER_BYTES} bytes per user (over all the
 * user's sessions) and {@value #BUDGET_BYTES} bytes in all are reserved at once; a request over any
 * of these is answered at once, its body unread: 429 {@code body_busy} (the session's or the user's
 * share) or 503 {@code body_busy} (the console's), with {@code Retry-After: 1}. A user holds at
 * most three quarters of the budget, so one full body is always left for the others (an admin's
 * apply while an auditor floods).
 *
 * <p>A route that takes no body refuses one ({@link #none}) with 413 {@code too_large}, unread. The
 * login is not counted here: its body is at most {@link ConsoleVerticle#LOGIN_BODY_BYTES} and read
 * before a session exists, so it is bounded by the connections instead (and a full budget never
 * refuses a login). Thread-safe; the handlers run on the event loop.
 */
final class RequestBodies {
  /** Longest body of a logged-in request (a policy text). */
  static final long MAX_BODY_BYTES = 16L << 20;

  /** Body bytes one session's requests may have reserved at once: one of the longest body. */
  static final long PER_SESSION_BYTES = MAX_BODY_BYTES;

  /** Body bytes all requests together may have reserved at once. */
  static final long BUDGET_BYTES = 64L << 20;

  /** Body bytes one user's requests may have reserved at once, over all the user's sessions. */
  static final long PER_USER_BYTES = 48L << 20;

  private final Map<ConsoleSessions.Session, Long> bySession = new HashMap<>();
  private final Map<String, Long> byUser = new HashMap<>();
  private long reserved;

  /**
   * Handler before a route's body is read, after its login and role checks: reserves the body's
   * length or refuses the request unread.
   */
  void reserve(RoutingContext ctx) {
    long length = length(ctx.request());
    if (length == 0) {
      ctx.next();
      return;
    }
    if (length > MAX_BODY_BYTES) {
      throw new ApiException(
          413, "too_large", "the request body is over the limit of " + mib(MAX_BODY_BYTES));
    }
    ConsoleSessions.Session s = ConsoleSessions.of(ctx);
    String user = AuthRoutes.user(ctx);
    take(s, user, length);
    ctx.addEndHandler(ar -> give(s, user, length));
    ctx.next();
  }

  /** Handler of the routes that take no body: one is refused with 413, unread. */
  static void none(RoutingContext ctx) {
    if (length(ctx.request()) != 0) {
      throw new ApiException(
          413,
          "too_large",
          ctx.request().method()
              + " "
              + ctx.request().path()
              + " takes no request body (its limit is 0 bytes)");
    }
    ctx.next();
  }

  /** Body bytes reserved now, all requests together: at least what they have buffered. */
  synchronized long reserved() {
    return reserved;
  }

  private synchronized void take(ConsoleSessions.Session s, String user, long length) {
    if (bySession.getOrDefault(s, 0L) + length > PER_SESSION_BYTES) {
      throw busy(
          429,
          "this session already sends "
              + mib(bySession.getOrDefault(s, 0L))
              + " of request bodies; a session's most at once is "
              + mib(PER_SESSION_BYTES));
    }
    if (byUser.getOrDefault(user, 0L) + length > PER_USER_BYTES) {
      throw busy(
          429,
          "user '"
              + user
              + "' already sends "
              + mib(byUser.getOrDefault(user, 0L))
              + " of request bodies; a user's most at once is "
              + mib(PER_USER_BYTES));
    }
    if (reserved + length > BUDGET_BYTES) {
      throw busy(
          503,
          "the console already reads "
              + mib(reserved)
              + " of request bodies; its most at once is "
              + mib(BUDGET_BYTES));
    }
    bySession.merge(s, length, Long::sum);
    byUser.merge(user, length, Long::sum);
    reserved += length;
  }

  private synchronized void give(ConsoleSessions.Session s, String user, long length) {
    bySession.computeIfPresent(s, (k, n) -> n > length ? n - length : null);
    byUser.computeIfPresent(user, (k, n) -> n > length ? n - length : null);
    reserved -= length;
  }

  /**
   * The body length a request announces: its {@code Content-Length} ({@link Long#MAX_VALUE} if that
   * is not a number), {@link #MAX_BODY_BYTES} if it is chunked (its body handler stops there), 0
   * without a body.
   */
  private static long length(HttpServerRequest r) {
    String te = r.getHeader(HttpHeaders.TRANSFER_ENCODING);
    String cl = r.getHeader(HttpHeaders.CONTENT_LENGTH);
    if (te != null) {
      return MAX_BODY_BYTES;
    }
    if (cl == null) {
      return 0;
    }
    try {
      long n = Long.parseLong(cl.trim());
      return n < 0 ? Long.MAX_VALUE : n;
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE;
    }
  }

  private static String mib(long bytes) {
    return bytes % (1L << 20) == 0 ? (bytes >> 20) + " MiB" : bytes + " bytes";
  }

  private static ApiException busy(int status, String message) {
    ApiException e =
        new ApiException(status, "body_busy", message + "; try again when one has been read");
    e.retryAfterSeconds = 1;
    return e;
  }
}
