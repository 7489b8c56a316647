package io.srdma.console;

import io.vertx.core.json.JsonArray;

/** A request the API refuses: an HTTP status, a stable code and a message for people. */
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
    super(message, null, false, false);
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

  static ApiException badRequest(String message) {
    return new ApiException(400, "bad_request", message);
  }

  static ApiException notFound(String message) {
    return new ApiException(404, "not_found", message);
  }
}
