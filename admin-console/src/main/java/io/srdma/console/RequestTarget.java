package io.srdma.console;

import io.vertx.ext.web.RoutingContext;

/**
 * The first check of every request: its target (path and query) must be a well-formed URI, so that
 * every route can read it. A target with a raw control character (RFC 3986 has none; the HTTP
 * parser lets ESC and DEL through) or a {@code %} not followed by two hex digits is answered 400
 * {@code bad_request} here, in the API's JSON and with the security headers, before any route reads
 * it.
 *
 * <p>Without this, Vert.x's lazy decoding threw in whichever handler first read the path or a query
 * parameter: an untyped plain-text 400 with an ERROR stack trace for a bad path (anyone, no login
 * needed), a 500 with a WARN stack trace for a bad query whose message quoted the raw target,
 * escape sequences included, into the console's log.
 */
final class RequestTarget {
  private RequestTarget() {}

  /** Route handler: answers a malformed target, passes a good one on. */
  static void check(RoutingContext ctx) {
    String problem = problem(ctx);
    if (problem != null) {
      // answered here, not failed: the failure handlers' routing would decode the path again
      Http.error(ctx, 400, "bad_request", problem);
      return;
    }
    ctx.next();
  }

  /** Why the request's target cannot be read, or null if it can. */
  private static String problem(RoutingContext ctx) {
    String uri = ctx.request().uri();
    for (int i = 0; i < uri.length(); i++) {
      if (Character.isISOControl(uri.charAt(i))) {
        return "the request target holds a control character; percent-encode it";
      }
    }
    try {
      ctx.normalizedPath(); // decodes the path's escapes
      ctx.request().params(); // decodes the query's
    } catch (IllegalArgumentException e) {
      return "the request target is not well-formed: every '%' must be followed by two hex digits"
          + " (RFC 3986 percent-encoding)";
    }
    return null;
  }
}
