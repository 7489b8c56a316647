package io.srdma.console;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/**
 * {@code /api/cluster}: the fleet view of a clustered deployment (docs/cluster.md). A single host
 * answers {@code {"clustered":false}} and nothing else changes.
 */
final class ClusterRoutes {
  private final ConsoleBackend backend;
  private final ConsoleMetrics metrics;

  ClusterRoutes(ConsoleBackend backend, ConsoleMetrics metrics) {
    this.backend = backend;
    this.metrics = metrics;
  }

  /** This host's link to etcd and every host of the fleet. */
  void fleet(RoutingContext ctx) {
    ClusterView view = backend.cluster();
    if (view == null) {
      Http.json(ctx, 200, new JsonObject().put("clustered", false));
      return;
    }
    Blocking.run(
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
              .put("link", link(view.link()))
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
    Blocking.run(
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

  /** Revokes a grant on any host (admin): its key is deleted, its host revokes it. */
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
    Blocking.run(
        ctx,
        () -> {
          if (!view.revoke(host, id)) {
            throw ApiException.notFound("no live grant " + id + " of host '" + host + "'");
          }
          metrics.revocations.increment();
          return new JsonObject()
              .put("revoked", true)
              .put("host", host)
              .put("id", Long.toString(id));
        },
        body -> Http.json(ctx, 200, body));
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

  static JsonObject link(ClusterView.Link l) {
    return new JsonObject()
        .put("host", l.host())
        .put("prefix", l.prefix())
        .put("state", l.connected() ? "connected" : "degraded")
        .put("since", l.since().toString())
        .put("lastError", l.lastError())
        .put("degradedEpisodes", l.degradedEpisodes());
  }
}
