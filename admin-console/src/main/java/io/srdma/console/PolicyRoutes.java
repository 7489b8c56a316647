package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyError;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import io.srdma.policy.ReloadResult;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/** The running policy, validation of an edited one with a diff, and atomic reload. */
final class PolicyRoutes {
  /** The name edited text has in error positions: {@code edited:12:5: reason}. */
  static final String LABEL = "edited";

  private final ConsoleBackend backend;
  private final AuditTrail trail;
  private final ConsoleMetrics metrics;
  private final PolicyLoader loader = new PolicyLoader();

  PolicyRoutes(ConsoleBackend backend, AuditTrail trail, ConsoleMetrics metrics) {
    this.backend = backend;
    this.trail = trail;
    this.metrics = metrics;
  }

  void get(RoutingContext ctx) {
    Blocking.run(
        ctx,
        () -> {
          Policy p = backend.policy();
          return new JsonObject()
              .put("source", p.source())
              .put("sha256", p.sha256())
              .put("tenants", new JsonArray(List.copyOf(p.tenants().keySet())))
              .put("text", backend.policyText());
        },
        body -> Http.json(ctx, 200, body));
  }

  /**
   * Validates edited text: 200 with {@code valid}, {@code errors} and {@code diff}; 400 {@code
   * hostile_policy} with the error if the text breaks a hard limit (nesting, size, anchors and
   * aliases, tags, characters; see {@link io.srdma.policy.BoundedYaml}), without a diff.
   */
  void validate(RoutingContext ctx) {
    String text = Http.string(Http.body(ctx), "text");
    Blocking.run(
        ctx,
        () -> {
          String running = backend.policyText();
          JsonObject out = new JsonObject().put("runningSha256", backend.policy().sha256());
          try {
            Policy p = loader.parse(LABEL, text);
            out.put("valid", true).put("sha256", p.sha256()).put("errors", new JsonArray());
          } catch (PolicyRejectedException e) {
            if (e.limitExceeded()) {
              throw hostile(e);
            }
            out.put("valid", false).put("errors", Views.errors(e.errors()));
          }
          List<LineDiff.Line> diff = LineDiff.diff(running, text);
          return out.put("changed", diff.stream().anyMatch(l -> l.op() != ' '))
              .put("diff", Views.diff(diff));
        },
        body -> Http.json(ctx, 200, body));
  }

  /**
   * Applies edited text: validate, then {@link ConsoleBackend#reload} (atomic), then the audit
   * line. {@code base}, if given, must be the SHA-256 of the running policy (no lost updates).
   * Invalid text is 422 {@code invalid_policy}, text breaking a hard limit 400 {@code
   * hostile_policy}; both are audited as a failed reload.
   */
  void apply(RoutingContext ctx) {
    JsonObject body = Http.body(ctx);
    String text = Http.string(body, "text");
    String base = Http.optString(body, "base");
    String user = AuthRoutes.user(ctx);
    Blocking.run(
        ctx,
        () -> {
          String running = backend.policy().sha256();
          if (base != null && !base.equalsIgnoreCase(running)) {
            throw new ApiException(
                409,
                "conflict",
                "the running policy changed since you loaded it (now "
                    + running.substring(0, 12)
                    + "); reload the page and edit again");
          }
          Policy next;
          try {
            next = loader.parse(LABEL, text);
          } catch (PolicyRejectedException e) {
            trail.reloadRejected(e, user);
            metrics.reloadsRejected.increment();
            if (e.limitExceeded()) {
              throw hostile(e);
            }
            throw new ApiException(
                422, "invalid_policy", summary(e.errors()), Views.errors(e.errors()));
          }
          ReloadResult r;
          try {
            r = backend.reload(next, text, user);
          } catch (PolicyException e) {
            trail.reloadRejected(e, user);
            metrics.reloadsRejected.increment();
            throw new ApiException(409, "reload_refused", e.getMessage());
          }
          metrics.reloadsApplied.increment();
          return Views.reload(r);
        },
        out -> Http.json(ctx, 200, out));
  }

  private static ApiException hostile(PolicyRejectedException e) {
    return new ApiException(400, "hostile_policy", summary(e.errors()), Views.errors(e.errors()));
  }

  private static String summary(List<PolicyError> errors) {
    return errors.size()
        + (errors.size() == 1 ? " error" : " errors")
        + "; first: "
        + errors.get(0);
  }
}
