package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyError;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import io.srdma.policy.ReloadResult;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The running policy, validation of an edited one with a diff, and atomic reload.
 *
 * <p>Users who may not apply a policy (auditors) see every console user's {@code password-hash} as
 * {@value #REDACTED}, in the text and in the diff: a hash is an offline guessing target. The values
 * are found by reading the text as the policy reader does, whatever YAML or JSON form they are
 * written in; a text that still looks as if it held a hash afterwards is withheld as a whole
 * ({@link PolicyRedaction}, {@code withheld: true}). Admins see the text as it is, so what they
 * apply never holds a placeholder.
 */
final class PolicyRoutes {
  /** The name edited text has in error positions: {@code edited:12:5: reason}. */
  static final String LABEL = "edited";

  /** What a hidden {@code password-hash} value reads. */
  static final String REDACTED = PolicyRedaction.REDACTED;

  private final ConsoleBackend backend;
  private final AuditTrail trail;
  private final ConsoleMetrics metrics;
  private final Predicate<String> seesHashes;
  private final WorkerExecutor applies;
  private final HeavyWork heavy;
  private final LightWork light;
  private final PolicyLoader loader = new PolicyLoader();

  /**
   * @param seesHashes whether a console user sees password hashes: those who may apply a policy
   * @param applies a one-thread executor: applies run on it one at a time, so each one's check of
   *     {@code base} and its reload are one step no other apply comes between
   * @param heavy where validations run: each parses up to 16 MiB, a few at once per session
   * @param light where reading the policy in force runs, a few of each user's at once
   */
  PolicyRoutes(
      ConsoleBackend backend,
      AuditTrail trail,
      ConsoleMetrics metrics,
      Predicate<String> seesHashes,
      WorkerExecutor applies,
      HeavyWork heavy,
      LightWork light) {
    this.backend = backend;
    this.light = light;
    this.trail = trail;
    this.metrics = metrics;
    this.seesHashes = seesHashes;
    this.applies = applies;
    this.heavy = heavy;
  }

  /**
   * The text with every {@code password-hash} value replaced by {@value #REDACTED}, or {@link
   * PolicyRedaction#WITHHELD} if that cannot be done for sure.
   */
  static String redact(String text) {
    return PolicyRedaction.redact(text, List.of()).text();
  }

  /** The text as this user may see it: as is for those who may apply, else redacted. */
  private PolicyRedaction.Shown shown(RoutingContext ctx, String text, Policy... policies) {
    if (seesHashes.test(AuthRoutes.user(ctx))) {
      return new PolicyRedaction.Shown(text, false);
    }
    List<String> known = new ArrayList<>();
    for (Policy p : policies) {
      if (p != null) {
        p.consoleUsers().values().forEach(u -> known.add(u.passwordHash()));
      }
    }
    return PolicyRedaction.redact(text, known);
  }

  void get(RoutingContext ctx) {
    light.run(
        ctx,
        () -> {
          Policy p = backend.policy();
          PolicyRedaction.Shown text = shown(ctx, backend.policyText(), p);
          return new JsonObject()
              .put("source", p.source())
              .put("sha256", p.sha256())
              .put("tenants", new JsonArray(List.copyOf(p.tenants().keySet())))
              .put("text", text.text())
              .put("withheld", text.withheld());
        },
        body -> Http.json(ctx, 200, body));
  }

  /**
   * Validates edited text: 200 with {@code valid}, {@code errors} and {@code diff}; 400 {@code
   * hostile_policy} with the error if the text breaks a hard limit (nesting, size, anchors and
   * aliases, tags, characters; see {@link io.srdma.policy.BoundedYaml}), without a diff. A heavy
   * request ({@link HeavyWork}): even the body's JSON is decoded on the heavy pool, not the event
   * loop.
   */
  void validate(RoutingContext ctx) {
    heavy.run(
        ctx,
        () -> {
          String text = Http.string(Http.body(ctx), "text");
          String running = backend.policyText();
          Policy runningPolicy = backend.policy();
          JsonObject out = new JsonObject().put("runningSha256", runningPolicy.sha256());
          Policy edited = null;
          try {
            edited = loader.parse(LABEL, text);
            out.put("valid", true).put("sha256", edited.sha256()).put("errors", new JsonArray());
          } catch (PolicyRejectedException e) {
            if (e.limitExceeded()) {
              throw hostile(e);
            }
            out.put("valid", false).put("errors", Views.errors(e.errors()));
          }
          // an auditor's diff hides hashes on both sides (the text it got had them hidden); the
          // hashes of either policy are hidden wherever they stand in either text
          PolicyRedaction.Shown before = shown(ctx, running, runningPolicy, edited);
          PolicyRedaction.Shown after = shown(ctx, text, runningPolicy, edited);
          List<LineDiff.Line> diff = LineDiff.diff(before.text(), after.text());
          boolean withheld = before.withheld() || after.withheld();
          return out.put(
                  "changed",
                  withheld ? !running.equals(text) : diff.stream().anyMatch(l -> l.op() != ' '))
              .put("withheld", withheld)
              .put("diff", Views.diff(diff));
        },
        body -> Http.json(ctx, 200, body));
  }

  /**
   * Applies edited text: validate, then {@link ConsoleBackend#reload} (atomic), then the audit
   * line. {@code base}, if given, must be the SHA-256 of the running policy (no lost updates):
   * otherwise 409 {@code conflict}. Applies run one at a time on the one-thread executor, so of two
   * applies on the same base one wins and the other gets the conflict, never both the reload.
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
        applies,
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
