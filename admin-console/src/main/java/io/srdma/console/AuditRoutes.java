package io.srdma.console;

import io.srdma.policy.AuditAction;
import io.srdma.policy.AuditOutcome;
import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/** The audit log: filtered pages, JSON-lines export, chain verification. */
final class AuditRoutes {
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 500;

  private final ConsoleBackend backend;

  AuditRoutes(ConsoleBackend backend) {
    this.backend = backend;
  }

  /** Newest first: {@code total}, {@code offset}, {@code limit}, {@code items}. */
  void list(RoutingContext ctx) {
    AuditReader.Filter f = filter(ctx);
    int offset = Http.intParam(ctx, "offset", 0, 0, Integer.MAX_VALUE);
    int limit = Http.intParam(ctx, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    Blocking.run(
        ctx,
        () -> {
          List<AuditReader.Entry> all = new AuditReader(backend.auditLog()).read(f);
          JsonArray items = new JsonArray();
          for (int i = all.size() - 1 - offset, n = 0; i >= 0 && n < limit; i--, n++) {
            items.add(all.get(i).json());
          }
          return new JsonObject()
              .put("total", all.size())
              .put("offset", offset)
              .put("limit", limit)
              .put("items", items);
        },
        body -> Http.json(ctx, 200, body));
  }

  /** The matching lines as they are in the log (JSON lines, oldest first): still verifiable. */
  void export(RoutingContext ctx) {
    AuditReader.Filter f = filter(ctx);
    Blocking.run(
        ctx,
        () -> {
          StringBuilder b = new StringBuilder();
          for (AuditReader.Entry e : new AuditReader(backend.auditLog()).read(f)) {
            b.append(e.raw()).append('\n');
          }
          return b.toString();
        },
        text ->
            ctx.response()
                .putHeader("Content-Type", "application/x-ndjson; charset=utf-8")
                .putHeader(
                    "Content-Disposition",
                    "attachment; filename=\"srdma-audit-"
                        + Instant.now().toString().replace(':', '-')
                        + ".jsonl\"")
                .end(text));
  }

  void verify(RoutingContext ctx) {
    Blocking.run(
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
