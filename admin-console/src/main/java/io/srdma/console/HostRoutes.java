package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.LiveGrant;
import io.srdma.policy.PeerEntry;
import io.srdma.policy.Tenant;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/** Overview counters and their live stream, sessions, regions, grants and revocation. */
final class HostRoutes {
  /** A live stream ends after this long; the browser reconnects, which re-checks the login. */
  static final Duration STREAM_LIFETIME = Duration.ofMinutes(5);

  private final Vertx vertx;
  private final ConsoleBackend backend;
  private final AuditTrail trail;
  private final ConsoleMetrics metrics;
  private final LongSupplier loginFailures;
  private final Predicate<ConsoleSessions.Session> live;
  private final long intervalMillis;
  private final WorkerExecutor prompt;
  private final LightWork light;

  /**
   * @param live whether a session may still be served (see {@link AuthRoutes#live}); the stream
   *     asks it before every event
   * @param prompt the console's pool for logins, logouts and revokes, where {@link #revoke} runs
   * @param light where the other routes' backend calls run, a few of each user's at once
   */
  HostRoutes(
      Vertx vertx,
      ConsoleBackend backend,
      AuditTrail trail,
      ConsoleMetrics metrics,
      LongSupplier loginFailures,
      Predicate<ConsoleSessions.Session> live,
      Duration interval,
      WorkerExecutor prompt,
      LightWork light) {
    this.vertx = vertx;
    this.light = light;
    this.prompt = prompt;
    this.backend = backend;
    this.trail = trail;
    this.metrics = metrics;
    this.loginFailures = loginFailures;
    this.live = live;
    this.intervalMillis = interval.toMillis();
  }

  void stats(RoutingContext ctx) {
    light.run(ctx, backend::stats, s -> Http.json(ctx, 200, statsJson(s)));
  }

  private JsonObject statsJson(ConsoleStats s) {
    return Views.stats(s, loginFailures.getAsLong(), System.currentTimeMillis());
  }

  /**
   * Server-sent events: one {@code stats} event per interval. Before every event the session is
   * checked again (logged out, expired, its user's password changed or console role gone): the
   * stream of a session that ended ends within one interval, and the browser's reconnect is then
   * refused.
   */
  void stream(RoutingContext ctx) {
    ConsoleSessions.Session session = ConsoleSessions.of(ctx);
    HttpServerResponse r = ctx.response();
    r.setChunked(true)
        .putHeader("Content-Type", "text/event-stream; charset=utf-8")
        .putHeader("Cache-Control", "no-store");
    WriteDeadlines.write(ctx, Buffer.buffer("retry: 2000\n\n"));
    long end = System.nanoTime() + STREAM_LIFETIME.toNanos();
    long[] timer = new long[1];
    boolean[] busy = new boolean[1];
    timer[0] =
        vertx.setPeriodic(
            0,
            intervalMillis,
            id -> {
              if (r.closed() || r.ended()) {
                vertx.cancelTimer(id);
                return;
              }
              if (System.nanoTime() - end > 0 || !live.test(session)) {
                vertx.cancelTimer(id);
                WriteDeadlines.end(ctx, Buffer.buffer());
                return;
              }
              if (busy[0]) {
                return; // a slow backend: skip a beat rather than queue snapshots
              }
              busy[0] = true;
              light
                  .call(ctx, backend::stats)
                  .onComplete(
                      ar -> {
                        busy[0] = false;
                        if (r.closed() || r.ended()) {
                          return;
                        }
                        if (!live.test(session)) {
                          // the session ended while the snapshot was taken
                          vertx.cancelTimer(timer[0]);
                          WriteDeadlines.end(ctx, Buffer.buffer());
                          return;
                        }
                        // a client not taking its events: skip a beat rather than queue them;
                        // one taking none within the write timeout is cut (WriteDeadlines)
                        if (ar.succeeded() && !r.writeQueueFull()) {
                          WriteDeadlines.write(
                              ctx,
                              Buffer.buffer(
                                  "event: stats\ndata: "
                                      + statsJson(ar.result()).encode()
                                      + "\n\n"));
                        }
                      });
            });
    r.closeHandler(v -> vertx.cancelTimer(timer[0]));
  }

  void sessions(RoutingContext ctx) {
    light.run(
        ctx,
        () -> {
          List<SessionInfo> all = backend.sessions();
          JsonArray a = new JsonArray();
          all.stream()
              .sorted(Comparator.comparing(SessionInfo::tenant).thenComparing(SessionInfo::since))
              .forEach(s -> a.add(Views.session(s)));
          return new JsonObject().put("items", a);
        },
        body -> Http.json(ctx, 200, body));
  }

  /** The peer entries of the policy in force, with their live sessions and grants. */
  void peers(RoutingContext ctx) {
    light.run(
        ctx,
        () -> {
          List<SessionInfo> sessions = backend.sessions();
          List<GrantInfo> grants = backend.grants();
          JsonArray a = new JsonArray();
          for (Tenant t : backend.policy().tenants().values()) {
            for (PeerEntry p : t.peers()) {
              JsonArray roles = new JsonArray();
              p.roles().forEach(r -> roles.add(r.name()));
              a.add(
                  new JsonObject()
                      .put("tenant", t.name())
                      .put("identity", p.pattern().text())
                      .put("roles", roles)
                      .put(
                          "sessions",
                          sessions.stream()
                              .filter(
                                  s ->
                                      s.tenant().equals(t.name())
                                          && p.pattern().matches(s.identity()))
                              .count())
                      .put(
                          "liveGrants",
                          grants.stream()
                              .filter(
                                  g ->
                                      g.tenant().equals(t.name())
                                          && p.pattern().matches(g.identity()))
                              .count()));
            }
          }
          return new JsonObject().put("items", a);
        },
        body -> Http.json(ctx, 200, body));
  }

  void regions(RoutingContext ctx) {
    light.run(
        ctx,
        () -> {
          JsonArray a = new JsonArray();
          backend.regions().forEach(r -> a.add(Views.region(r)));
          return new JsonObject().put("items", a);
        },
        body -> Http.json(ctx, 200, body));
  }

  /** Live grants, filtered by {@code tenant}, {@code peer} (substring) and {@code region}. */
  void grants(RoutingContext ctx) {
    String tenant = Http.param(ctx, "tenant");
    String peer = Http.param(ctx, "peer");
    String region = Http.param(ctx, "region");
    light.run(
        ctx,
        () -> {
          JsonArray a = new JsonArray();
          backend.grants().stream()
              .filter(g -> tenant == null || g.tenant().equals(tenant))
              .filter(g -> peer == null || g.identity().contains(peer))
              .filter(g -> region == null || g.region().equals(region))
              .sorted(Comparator.comparing(GrantInfo::issuedAt).thenComparing(GrantInfo::grantId))
              .forEach(g -> a.add(Views.grant(g)));
          return new JsonObject().put("items", a);
        },
        body -> Http.json(ctx, 200, body));
  }

  void grant(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    light.run(ctx, () -> find(id), g -> Http.json(ctx, 200, Views.grant(g)));
  }

  /**
   * Revokes a grant: the host invalidates the window and audits the revocation (actor = user). A
   * revoke that does not happen is audited here, as the fleet revoke's ({@link
   * ClusterRoutes#revoke}): a grant that was listed but ended before the revoke reached it
   * (expired, released, revoked by another) is a {@code revoke}/{@code failure} line and 404; a
   * revocation that threw, one with a {@code not confirmed} detail, and the error. An id never
   * listed is 404 without a line: nothing was attempted.
   */
  void revoke(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    String user = AuthRoutes.user(ctx);
    Blocking.runOn(
        ctx,
        prompt,
        () -> {
          GrantInfo g = find(id);
          boolean revoked;
          try {
            revoked = backend.revoke(id, user);
          } catch (RuntimeException e) {
            RevokeFailures.audit(trail, audited(g), user, RevokeFailures.notConfirmed(e), e);
            throw e;
          }
          if (!revoked) {
            ApiException gone =
                ApiException.notFound("grant '" + id + "' ended before it could be revoked");
            RevokeFailures.audit(
                trail, audited(g), user, "not revoked: no longer live (ended meanwhile)", gone);
            throw gone;
          }
          metrics.revocations.increment();
          return g;
        },
        g ->
            Http.json(
                ctx, 200, new JsonObject().put("revoked", true).put("grant", Views.grant(g))));
  }

  /** A listed grant as its audit line describes it. */
  private static LiveGrant audited(GrantInfo g) {
    Duration ttl =
        g.expiresAt().isAfter(g.issuedAt())
            ? Duration.between(g.issuedAt(), g.expiresAt())
            : Duration.ZERO;
    return new LiveGrant(
        g.grantId(),
        g.identity(),
        g.tenant(),
        g.region(),
        g.operations(),
        g.offset(),
        g.length(),
        ttl,
        g.issuedAt(),
        null);
  }

  private GrantInfo find(String id) {
    return backend.grants().stream()
        .filter(g -> g.grantId().equals(id))
        .findFirst()
        .orElseThrow(() -> ApiException.notFound("no live grant with id '" + id + "'"));
  }
}
