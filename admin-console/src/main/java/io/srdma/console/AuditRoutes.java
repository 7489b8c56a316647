package io.srdma.console;

import io.micrometer.core.instrument.Counter;
import io.srdma.policy.AuditAction;
import io.srdma.policy.AuditOutcome;
import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * The audit log: filtered pages, JSON-lines export, chain verification. Each reads the whole log,
 * so each is a heavy request ({@link HeavyWork}): on the heavy pool, a few at once per session and
 * user.
 */
final class AuditRoutes {
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 500;

  private final ConsoleBackend backend;
  private final HeavyWork heavy;
  private final long exportMaxMillis;
  private final Counter exportTimeouts;

  /**
   * @param exportMaxDuration how long an export may take ({@link ConsoleConfig#exportMaxDuration})
   * @param exportTimeouts counts the exports cut off for it
   */
  AuditRoutes(
      ConsoleBackend backend, HeavyWork heavy, Duration exportMaxDuration, Counter exportTimeouts) {
    this.backend = backend;
    this.heavy = heavy;
    this.exportMaxMillis = exportMaxDuration.toMillis();
    this.exportTimeouts = exportTimeouts;
  }

  /**
   * Newest first: {@code total}, {@code offset}, {@code limit}, {@code items}. The log is read from
   * its end and only the page is kept ({@link AuditReader#newest}); {@code limit} is 1 to {@value
   * #MAX_LIMIT}, {@value #DEFAULT_LIMIT} if not given.
   */
  void list(RoutingContext ctx) {
    AuditReader.Filter f = filter(ctx);
    int offset = Http.intParam(ctx, "offset", 0, 0, Integer.MAX_VALUE);
    int limit = Http.intParam(ctx, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    heavy.run(
        ctx,
        () -> {
          AuditReader.Page page = new AuditReader(backend.auditLog()).newest(f, offset, limit);
          JsonArray items = new JsonArray();
          page.items().forEach(e -> items.add(e.json()));
          return new JsonObject()
              .put("total", page.total())
              .put("offset", offset)
              .put("limit", limit)
              .put("items", items);
        },
        body -> Http.json(ctx, 200, body));
  }

  /**
   * The matching lines as they are in the log (JSON lines, oldest first): still verifiable.
   * Streamed a chunk at a time ({@link AuditExport}), so an export of a large log holds little
   * memory. It holds its place among the heavy requests until its last chunk is read or the client
   * is gone, or is cut off at its maximum duration.
   */
  void export(RoutingContext ctx) {
    AuditReader.Filter f = filter(ctx);
    HeavyWork.Permit permit = heavy.acquire(ctx);
    Blocking.answer(
        ctx,
        heavy
            .submit(permit, () -> new AuditReader(backend.auditLog()).cursor(f))
            .onFailure(e -> permit.release()),
        cursor -> {
          try {
            ctx.response()
                .putHeader("Content-Type", "application/x-ndjson; charset=utf-8")
                .putHeader(
                    "Content-Disposition",
                    "attachment; filename=\"srdma-audit-"
                        + Instant.now().toString().replace(':', '-')
                        + ".jsonl\"");
          } catch (RuntimeException e) {
            cursor.close();
            permit.release();
            throw e;
          }
          // gives both back when it ends
          new AuditExport(ctx, cursor, heavy, permit, exportMaxMillis, exportTimeouts).start();
        });
  }

  void verify(RoutingContext ctx) {
    heavy.run(
        ctx,
        () -> {
          List<Path> files = new AuditReader(backend.auditLog()).files();
          if (files.isEmpty()) {
            return new JsonObject()
                .put("intact", true)
                .put("files", 0)
                .put("lines", 0)
                .put("summary", "no audit log yet");
          }
          AuditVerification v = AuditVerifier.verify(files, null);
          return Views.verification(v, files.size());
        },
        body -> Http.json(ctx, 200, body));
  }

  private static AuditReader.Filter filter(RoutingContext ctx) {
    Instant from = Http.instantParam(ctx, "from");
    Instant to = Http.instantParam(ctx, "to");
    String action = Http.param(ctx, "action");
    if (action != null
        && Arrays.stream(AuditAction.values()).noneMatch(a -> a.token().equals(action))) {
      throw ApiException.badRequest(
          "query parameter 'action' must be one of "
              + Arrays.stream(AuditAction.values()).map(AuditAction::token).toList());
    }
    String outcome = Http.param(ctx, "outcome");
    if (outcome != null
        && Arrays.stream(AuditOutcome.values()).noneMatch(o -> o.token().equals(outcome))) {
      throw ApiException.badRequest(
          "query parameter 'outcome' must be one of "
              + Arrays.stream(AuditOutcome.values()).map(AuditOutcome::token).toList());
    }
    return new AuditReader.Filter(
        from, to, Http.param(ctx, "tenant"), action, outcome, Http.param(ctx, "q"));
  }
}
