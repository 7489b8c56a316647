package io.srdma.console;

import io.vertx.core.json.JsonArray;

/**
 * A request the API refuses: an HTTP status, a stable code and a message for people. The message
 * holds no control character ({@link #printable}): it often echoes a value from the request (a
 * grant id, a host name), and it is logged as well as sent (Vert.x logs every failure at DEBUG).
 */
final class ApiException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  final int status;
  final String code;

  @SuppressWarnings("serial") // never serialized
  final JsonArray errors;

  ApiException(int status, String code, String message) {
    this(status, code, message, null);
  }

  ApiException(int status, String code, String message, JsonArray errors) {
    super(printable(message), null, false, false);
    this.status = status;
    this.code = code;
    this.errors = errors;
  }

  long retryAfterSeconds;

  static ApiException tooMany(String message, long retryAfterSeconds) {
    ApiException e = new ApiException(429, "rate_limited", message);
    e.retryAfterSeconds = retryAfterSeconds;
    return e;
  }

  /**
   * The text with every control character (C0, DEL, C1) and line or paragraph separator written as
   * a Java-style escape (backslash, {@code u}, four hex digits), so that a percent-encoded newline
   * or terminal escape in a request can neither forge a log line nor rewrite one on a terminal.
   */
  static String printable(String s) {
    if (s == null || s.chars().noneMatch(ApiException::unprintable)) {
      return s;
    }
    StringBuilder b = new StringBuilder(s.length() + 16);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (unprintable(c)) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  private static boolean unprintable(int c) {
    return Character.isISOControl(c) || c == '\u2028' || c == '\u2029';
  }

  static ApiException badRequest(String message) {
    return new ApiException(400, "bad_request", message);
  }

  static ApiException notFound(String message) {
    return new ApiException(404, "not_found", message);
  }
}
