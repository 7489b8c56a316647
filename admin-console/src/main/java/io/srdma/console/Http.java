package io.srdma.console;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** JSON responses, errors and request parsing shared by the API routes. */
final class Http {
  private static final Logger LOG = LoggerFactory.getLogger(Http.class);
  static final String JSON = "application/json; charset=utf-8";

  private Http() {}

  static void json(RoutingContext ctx, int status, Object body) {
    if (ctx.response().ended()) {
      return;
    }
    ctx.response().setStatusCode(status).putHeader("Content-Type", JSON);
    String text = body instanceof JsonObject o ? o.encode() : String.valueOf(body);
    WriteDeadlines.end(ctx, Buffer.buffer(text));
  }

  static void error(RoutingContext ctx, int status, String code, String message) {
    json(ctx, status, new JsonObject().put("code", code).put("message", message));
  }

  /** Failure handler of the API: every failure becomes a JSON error. */
  static void failure(RoutingContext ctx) {
    Throwable t = ctx.failure();
    if (t instanceof ApiException e) {
      JsonObject body = new JsonObject().put("code", e.code).put("message", e.getMessage());
      if (e.errors != null) {
        body.put("errors", e.errors);
      }
      if (e.status == 429 || e.retryAfterSeconds > 0) {
        ctx.response().putHeader("Retry-After", String.valueOf(e.retryAfterSeconds));
      }
      json(ctx, e.status, body);
    } else if (t instanceof DecodeException e) {
      error(ctx, 400, "bad_json", "the request body is not valid JSON: " + e.getMessage());
    } else if (t == null) {
      int s = ctx.statusCode();
      switch (s) {
        case 404 -> error(ctx, s, "not_found", "no such page or route");
        case 413 -> error(ctx, s, "too_large", "the request body is over the limit");
        default -> error(ctx, s, "http_" + s, "HTTP " + s);
      }
    } else {
      LOG.warn("{} {} failed", ctx.request().method(), ctx.request().path(), t);
      error(ctx, 500, "internal", "internal error; the console log has the details");
    }
  }

  /** The request body as a JSON object: 415 unless it says it is JSON, 400 if it is not. */
  static JsonObject body(RoutingContext ctx) {
    String type = ctx.request().getHeader("Content-Type");
    if (type == null || !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
      throw new ApiException(
          415, "unsupported_media_type", "send the body as Content-Type: application/json");
    }
    String text = ctx.body().asString();
    if (text == null || text.isBlank()) {
      throw new ApiException(400, "bad_json", "the request body is empty; expected a JSON object");
    }
    Object parsed;
    try {
      parsed = io.vertx.core.json.Json.decodeValue(text);
    } catch (DecodeException e) {
      throw new ApiException(
          400, "bad_json", "the request body is not valid JSON: " + firstLine(e.getMessage()));
    }
    if (!(parsed instanceof JsonObject o)) {
      throw new ApiException(400, "bad_json", "the request body must be a JSON object");
    }
    return o;
  }

  /** A required string field of a body. */
  static String string(JsonObject body, String field) {
    Object v = body.getValue(field);
    if (!(v instanceof String s)) {
      throw new ApiException(
          400,
          "bad_request",
          v == null
              ? "field '" + field + "' is required (a string)"
              : "field '" + field + "' must be a string");
    }
    return s;
  }

  /** An optional string field of a body; null if absent. */
  static String optString(JsonObject body, String field) {
    return body.getValue(field) == null ? null : string(body, field);
  }

  static Instant instantParam(RoutingContext ctx, String name) {
    String v = ctx.request().getParam(name);
    if (v == null || v.isBlank()) {
      return null;
    }
    try {
      return Instant.parse(v.trim());
    } catch (DateTimeParseException e) {
      throw ApiException.badRequest(
          "query parameter '"
              + name
              + "' must be an ISO-8601 instant such as 2026-11-29T19:00:00Z");
    }
  }

  static int intParam(RoutingContext ctx, String name, int dflt, int min, int max) {
    String v = ctx.request().getParam(name);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    try {
      int i = Integer.parseInt(v.trim());
      if (i < min || i > max) {
        throw new NumberFormatException();
      }
      return i;
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(
          "query parameter '" + name + "' must be an integer in " + min + ".." + max);
    }
  }

  static String param(RoutingContext ctx, String name) {
    String v = ctx.request().getParam(name);
    return v == null || v.isBlank() ? null : v.trim();
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
