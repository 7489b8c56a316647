package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.LiveGrant;
import io.srdma.policy.Operation;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code /api/cluster}: the fleet view of a clustered deployment (docs/cluster.md). A single host
 * answers {@code {"clustered":false}} and nothing else changes.
 */
final class ClusterRoutes {
  private final ConsoleBackend backend;
  private final AuditTrail trail;
  private final ConsoleMetrics metrics;
  private final WorkerExecutor prompt;
  private final LightWork light;

  /**
   * @param prompt the console's pool for logins, logouts and revokes, where {@link #revoke} runs
   * @param light where the fleet views run (each may wait out etcd's timeout), a few per user
   */
  ClusterRoutes(
      ConsoleBackend backend,
      AuditTrail trail,
      ConsoleMetrics metrics,
      WorkerExecutor prompt,
      LightWork light) {
    this.prompt = prompt;
    this.light = light;
    this.backend = backend;
    this.trail = trail;
    this.metrics = metrics;
  }

  /** This host's link to etcd and every host of the fleet. */
  void fleet(RoutingContext ctx) {
    ClusterView view = backend.cluster();
    if (view == null) {
      Http.json(ctx, 200, new JsonObject().put("clustered", false));
      return;
    }
    light.run(
        ctx,
        () -> {
          List<ClusterView.FleetGrant> grants = view.grants();
          JsonArray hosts = new JsonArray();
          for (ClusterView.FleetHost h : view.hosts()) {
            hosts.add(
                new JsonObject()
                    .put("host", h.host())
                    .put("policySha256", h.policySha256())
                    .put("policyRevision", h.policyRevision())
                    .put("applied", h.applied().toString())
                    .put("degraded", h.degraded())
                    .put("sessions", h.sessions() < 0 ? null : h.sessions())
                    .put("policyRefusals", h.policyRefusals())
                    .put("lastPolicyRefusal", refusal(h.lastPolicyRefusal()))
                    .put(
                        "liveGrants",
                        grants.stream().filter(g -> g.host().equals(h.host())).count()));
          }
          return new JsonObject()
              .put("clustered", true)
              .put("link", link(view))
              .put("deploymentPolicySha256", view.deploymentPolicySha256())
              .put("hosts", hosts);
        },
        body -> Http.json(ctx, 200, body));
  }

  /** Every live grant of the fleet (none for a single host). */
  void grants(RoutingContext ctx) {
    ClusterView view = backend.cluster();
    if (view == null) {
      Http.json(ctx, 200, new JsonObject().put("items", new JsonArray()));
      return;
    }
    light.run(
        ctx,
        () -> {
          JsonArray a = new JsonArray();
          for (ClusterView.FleetGrant g : view.grants()) {
            a.add(
                new JsonObject()
                    .put("host", g.host())
                    .put("id", Long.toString(g.grantId()))
                    .put("tenant", g.tenant())
                    .put("peer", g.peer())
                    .put("region", g.region())
                    .put("offset", g.offset())
                    .put("length", g.length())
                    .put("ops", g.ops())
                    .put("expiresAt", g.expiresAt().toString()));
          }
          return new JsonObject().put("items", a);
        },
        body -> Http.json(ctx, 200, body));
  }

  /**
   * Revokes a grant on any host (admin): its key is deleted, or its host asked to revoke it; its
   * host revokes it and writes its own {@code revoke} line. Once the outcome is known, this host's
   * log gets a {@code revoke} line with the console user as actor (grant {@code <host>/<id>},
   * reason {@code console}): outcome {@code success} only if the grant was revoked, {@code failure}
   * (with a detail) if it had already ended (404) or the revocation failed or was not confirmed in
   * time (500). A revocation is never prevented by the audit log: if the line cannot be written,
   * the grant stays revoked and the request fails.
   */
  void revoke(RoutingContext ctx) {
    ClusterView view = requireCluster(ctx);
    if (view == null) {
      return;
    }
    String host = ctx.pathParam("host");
    long id;
    try {
      id = Long.parseLong(ctx.pathParam("id"));
    } catch (NumberFormatException e) {
      ctx.fail(ApiException.notFound("no live grant with id '" + ctx.pathParam("id") + "'"));
      return;
    }
    String user = AuthRoutes.user(ctx);
    Blocking.runOn(
        ctx,
        prompt,
        () -> {
          ClusterView.FleetGrant g =
              view.grants().stream()
                  .filter(x -> x.host().equals(host) && x.grantId() == id)
                  .findFirst()
                  .orElseThrow(
                      () ->
                          ApiException.notFound("no live grant " + id + " of host '" + host + "'"));
          LiveGrant audited = audited(g);
          boolean revoked;
          try {
            revoked = view.revoke(host, id);
          } catch (RuntimeException e) {
            // etcd unreachable, or the host did not confirm in time: not known to be revoked
            RevokeFailures.audit(trail, audited, user, RevokeFailures.notConfirmed(e), e);
            throw e;
          }
          if (!revoked) {
            ApiException gone =
                ApiException.notFound(
                    "grant " + id + " of host '" + host + "' ended before it could be revoked");
            RevokeFailures.audit(
                trail, audited, user, "not revoked: no longer listed (ended meanwhile)", gone);
            throw gone;
          }
          trail.revoked(audited, user, "console"); // after the fact: the line means revoked
          metrics.revocations.increment();
          return new JsonObject()
              .put("revoked", true)
              .put("host", host)
              .put("id", Long.toString(id));
        },
        body -> Http.json(ctx, 200, body));
  }

  /** A fleet grant as the audit line describes it; its id names the host: {@code <host>/<id>}. */
  private static LiveGrant audited(ClusterView.FleetGrant g) {
    Set<Operation> ops = EnumSet.noneOf(Operation.class);
    for (String t : g.ops().split("[^a-z]+")) {
      Operation.fromToken(t).ifPresent(ops::add);
    }
    Instant now = Instant.now();
    Duration left =
        g.expiresAt().isAfter(now) ? Duration.between(now, g.expiresAt()) : Duration.ZERO;
    return new LiveGrant(
        g.host() + "/" + g.grantId(),
        g.peer(),
        g.tenant(),
        g.region(),
        ops,
        g.offset(),
        g.length(),
        left,
        now,
        null);
  }

  private ClusterView requireCluster(RoutingContext ctx) {
    ClusterView view = backend.cluster();
    if (view == null) {
      ctx.fail(ApiException.notFound("this host is not clustered"));
    }
    return view;
  }

  private static JsonObject refusal(ClusterView.PolicyRefusal r) {
    return r == null
        ? null
        : new JsonObject()
            .put("reason", r.reason())
            .put("serial", r.serial())
            .put("at", r.at().toString());
  }

  /**
   * This host's link to etcd, with the watches it found open but silent since it started (each
   * watched again and re-read; one not yet proven again is named in {@code lastError}).
   */
  static JsonObject link(ClusterView view) {
    ClusterView.Link l = view.link();
    return new JsonObject()
        .put("host", l.host())
        .put("prefix", l.prefix())
        .put("state", l.connected() ? "connected" : "degraded")
        .put("since", l.since().toString())
        .put("lastError", l.lastError())
        .put("degradedEpisodes", l.degradedEpisodes())
        .put("silentWatches", view.silentWatches());
  }
}
