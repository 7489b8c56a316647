package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleRole;
import io.srdma.policy.ConsoleUsers;
import io.srdma.verbs.doctor.DeviceCounter;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The console's one verticle: security headers and sessions on every route, {@code /api/*} behind
 * login with CSRF and per-route admin checks, {@code /metrics}, and the static UI mounted last.
 */
final class ConsoleVerticle extends VerticleBase {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ConsoleVerticle.class);
  static final String CSP =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src"
          + " 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors"
          + " 'none'";

  /** Body limit of logged-in requests (a policy file); see {@link RequestBodies}. */
  static final long MAX_BODY_BYTES = RequestBodies.MAX_BODY_BYTES;

  /**
   * Body limit of the login, the one route without a session: a user name of at most 128 and a
   * password of at most 1024 characters, even written as JSON escapes, fit.
   */
  static final long LOGIN_BODY_BYTES = 8L << 10;

  /**
   * A connection that sends and receives nothing this long is closed (slow or stuck clients); one
   * that trickles a byte at a time is bounded by {@link ConsoleConfig#requestReadTimeout} instead,
   * and one that takes its answer slowly or not at all by {@link
   * ConsoleConfig#responseWriteTimeout}.
   */
  static final int IDLE_TIMEOUT_SECONDS = 60;

  /** Longest request line (method, target, version) read; a longer one is refused. */
  static final int MAX_INITIAL_LINE_BYTES = 4096;

  /** Most bytes of request headers read; more are refused. */
  static final int MAX_HEADER_BYTES = 8192;

  /** A TLS handshake not done within this is abandoned and its connection closed. */
  static final int TLS_HANDSHAKE_TIMEOUT_SECONDS = 10;

  /**
   * Connections one client address (an IPv6 address by its /64) may hold at once; more are closed
   * as soon as they are made ({@link ConnectionLimit}). A browser opens 6 per host.
   */
  static final int MAX_CONNECTIONS_PER_ADDRESS = 64;

  /** Connections the console holds at once, from every address together. */
  static final int MAX_CONNECTIONS = 1024;

  static final String WEBROOT = "io/srdma/console/webroot";

  /**
   * The pool logins, logouts and revokes (this host's and the fleet's) run on: apart from Vert.x's
   * worker pool, which the other routes share, so however many of those wait on a slow host, a
   * login or an admin's revoke is served at once. Closed with the console.
   */
  static final String PROMPT_EXECUTOR = "srdma-console-auth";

  /**
   * Threads of {@link #PROMPT_EXECUTOR}: the password checks that may run at once ({@link
   * AuthRoutes#MAX_CONCURRENT_HASHES}, each for a few hundred ms) plus two, so a logout or a revoke
   * never waits behind them.
   */
  static final int PROMPT_THREADS = AuthRoutes.MAX_CONCURRENT_HASHES + 2;

  /** The one-thread worker pool policy applies run on, one at a time. */
  static final String APPLY_EXECUTOR = "srdma-console-policy-apply";

  private final ConsoleConfig config;
  private final ConsoleBackend backend;
  private final ConsoleUsers users;
  private final AuditTrail trail;
  final ConsoleMetrics metrics = new ConsoleMetrics();
  private HttpServer server;
  private WorkerExecutor applies;
  private WorkerExecutor heavyPool;
  private HeavyWork heavy;
  private WorkerExecutor prompt;
  private AuthRoutes auth;
  private ConsoleSessions sessions;
  private final RequestBodies bodies = new RequestBodies();

  /** Where light routes run: Vert.x's shared pool, a few of each user's requests at once. */
  private final LightWork light = new LightWork();

  ConsoleVerticle(
      ConsoleConfig config, ConsoleBackend backend, ConsoleUsers users, AuditTrail trail) {
    this.config = config;
    this.backend = backend;
    this.users = users;
    this.trail = trail;
  }

  int actualPort() {
    return server.actualPort();
  }

  int sessionCount() {
    return sessions.size();
  }

  long bodyBytesReserved() {
    return bodies.reserved();
  }

  int heavyInFlight() {
    return heavy.inFlight();
  }

  @Override
  public Future<?> start() {
    LoginLimiter limiter =
        new LoginLimiter(config.loginAttempts(), config.loginWindow(), Clock.systemUTC());
    sessions =
        new ConsoleSessions(config.sessionTimeout(), config.sessionLifetime(), Clock.systemUTC());
    // login, logout, revoke: their own small pool, never queued behind the routes that share
    // Vert.x's worker pool
    prompt = vertx.createSharedWorkerExecutor(PROMPT_EXECUTOR, PROMPT_THREADS);
    auth = new AuthRoutes(users, backend::policy, trail, limiter, metrics, sessions, prompt);
    HostRoutes host =
        new HostRoutes(
            vertx,
            backend,
            trail,
            metrics,
            auth::loginFailures,
            auth::live,
            config.streamInterval(),
            prompt,
            light);
    // one thread: a policy apply's base check and reload are one step (no lost update)
    applies = vertx.createSharedWorkerExecutor(APPLY_EXECUTOR, 1);
    // audit pages, export and verify, policy validate: their own bounded pool and per-session and
    // per-user limits, so a flood of them never queues in front of a login or a revoke
    heavyPool = vertx.createSharedWorkerExecutor(HeavyWork.EXECUTOR, HeavyWork.THREADS);
    heavy = new HeavyWork(heavyPool);
    PolicyRoutes policy =
        new PolicyRoutes(
            backend,
            trail,
            metrics,
            u -> users.hasRole(u, ConsoleRole.ADMIN),
            applies,
            heavy,
            light);
    AuditRoutes audit =
        new AuditRoutes(backend, heavy, config.exportMaxDuration(), metrics.exportTimeouts);
    ClusterRoutes cluster = new ClusterRoutes(backend, trail, metrics, prompt, light);
    if (backend.cluster() != null) {
      metrics.cluster(backend.cluster());
    }

    // every request's head and body must arrive within the read timeout, whoever sends it
    ReadDeadlines deadlines = new ReadDeadlines(vertx, config.requestReadTimeout().toMillis());
    // and what it is sent must be taken, a piece at a time, within the write timeout
    WriteDeadlines writes =
        new WriteDeadlines(
            vertx, config.responseWriteTimeout().toMillis(), metrics.responseWriteTimeouts);
    Router router = Router.router(vertx);
    router.route().handler(deadlines::request);
    router.route().handler(writes::request);
    router.route().handler(ConsoleVerticle::securityHeaders);
    router.route().handler(RequestTarget::check);
    router.route().handler(sessions::attach);
    router.get("/metrics").handler(this::metrics);

    Router api = Router.router(vertx);
    // no body is read before it is known whose it is and that it will be used: the login's is
    // small; anyone else's only after the session, CSRF, role and heavy-request checks, within the
    // console's budget of buffered bodies (RequestBodies); a route that takes none refuses one
    api.post("/login")
        .handler(BodyHandler.create(false).setBodyLimit(LOGIN_BODY_BYTES))
        .handler(auth::login);
    api.route().handler(auth::requireLogin);
    api.route().handler(auth::requireCsrf);
    withBody(api, "/policy/validate", heavy::admit, policy::validate);
    withBody(api, "/policy/apply", auth::requireAdmin, policy::apply);
    api.route().handler(RequestBodies::none);
    api.get("/me").handler(auth::me);
    api.post("/logout").handler(auth::logout);
    api.get("/stats").handler(host::stats);
    api.get("/stream").handler(host::stream);
    api.get("/sessions").handler(host::sessions);
    api.get("/peers").handler(host::peers);
    api.get("/regions").handler(host::regions);
    api.get("/grants").handler(host::grants);
    api.get("/grants/:id").handler(host::grant);
    api.delete("/grants/:id").handler(auth::requireAdmin).handler(host::revoke);
    api.get("/policy").handler(policy::get);
    api.get("/audit").handler(audit::list);
    api.get("/audit/export").handler(audit::export);
    api.get("/audit/verify").handler(audit::verify);
    api.get("/cluster").handler(cluster::fleet);
    api.get("/cluster/grants").handler(cluster::grants);
    api.delete("/cluster/grants/:host/:id").handler(auth::requireAdmin).handler(cluster::revoke);
    api.route()
        .handler(
            ctx -> {
              throw ApiException.notFound(
                  "no API route " + ctx.request().method() + " " + ctx.request().path());
            });
    api.route().failureHandler(Http::failure);
    router.route("/api/*").subRouter(api);

    router.route().handler(auth::pageGuard);
    router.route().handler(ConsoleVerticle::cacheableAssets);
    router.route().handler(StaticHandler.create(WEBROOT).setIndexPage("index.html"));
    router.route().failureHandler(Http::failure);

    HttpServerOptions options =
        new HttpServerOptions()
            .setHost(config.host())
            .setPort(config.port())
            .setSsl(true)
            .setKeyCertOptions(Tls.keyCertOptions(config))
            .setEnabledSecureTransportProtocols(Set.of("TLSv1.3"))
            .setIdleTimeout(IDLE_TIMEOUT_SECONDS)
            .setIdleTimeoutUnit(TimeUnit.SECONDS)
            // what an anonymous client may make the console hold of a request's head, and how
            // long its TLS handshake may take: Vert.x's defaults, set here so they stay
            .setMaxInitialLineLength(MAX_INITIAL_LINE_BYTES)
            .setMaxHeaderSize(MAX_HEADER_BYTES)
            .setSslHandshakeTimeout(TLS_HANDSHAKE_TIMEOUT_SECONDS)
            .setSslHandshakeTimeoutUnit(TimeUnit.SECONDS);
    ConnectionLimit connections = new ConnectionLimit(MAX_CONNECTIONS_PER_ADDRESS, MAX_CONNECTIONS);
    return vertx
        .createHttpServer(options)
        .connectionHandler(
            c -> {
              if (connections.accept(c, () -> deadlines.closed(c))) {
                deadlines.opened(c);
              }
            })
        .requestHandler(router)
        .listen()
        .onSuccess(s -> server = s);
  }

  @Override
  public Future<?> stop() {
    metrics.close();
    Future<Void> closed = server == null ? Future.succeededFuture() : server.close();
    if (applies != null) {
      closed = closed.eventually(applies::close);
    }
    if (prompt != null) {
      closed = closed.eventually(prompt::close);
    }
    return heavyPool == null ? closed : closed.eventually(heavyPool::close);
  }

  /**
   * A POST route that takes a body: {@code guard} (a role check, a heavy-request place) runs before
   * a byte of it is read, then the body's length is reserved in the console's budget, then it is
   * read (Vert.x wants the body handler on a route of its own, after those), then {@code handler}.
   */
  private void withBody(
      Router api, String path, Handler<RoutingContext> guard, Handler<RoutingContext> handler) {
    api.post(path).handler(guard).handler(bodies::reserve);
    api.post(path).handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES));
    api.post(path).handler(handler);
  }

  private static void securityHeaders(RoutingContext ctx) {
    HttpServerResponse r = ctx.response();
    r.putHeader("Content-Security-Policy", CSP)
        .putHeader("X-Frame-Options", "DENY")
        .putHeader("X-Content-Type-Options", "nosniff")
        .putHeader("Referrer-Policy", "no-referrer")
        .putHeader("Strict-Transport-Security", "max-age=31536000")
        .putHeader("Cross-Origin-Opener-Policy", "same-origin")
        .putHeader("Cross-Origin-Resource-Policy", "same-origin")
        // every answer by default, whatever spelling of its path a route matched (/metrics/ is
        // /metrics); only scripts and stylesheets opt out (cacheableAssets)
        .putHeader("Cache-Control", "no-store");
    ctx.next();
  }

  /**
   * Scripts and stylesheets hold no data: the static handler may let browsers cache them (its own
   * {@code Cache-Control} applies). Every other answer, pages and errors included, stays {@code
   * no-store}.
   */
  private static void cacheableAssets(RoutingContext ctx) {
    String path = ctx.normalizedPath();
    if (path.endsWith(".js") || path.endsWith(".css")) {
      ctx.response().headers().remove("Cache-Control");
    }
    ctx.next();
  }

  /** Prometheus text; needs a console login or {@code Authorization: Bearer <metrics token>}. */
  private void metrics(RoutingContext ctx) {
    ConsoleSessions.Session s = ConsoleSessions.of(ctx);
    boolean loggedIn = s != null && auth.stillValid(s);
    if (!loggedIn && !bearerOk(ctx.request().getHeader("Authorization"))) {
      throw new ApiException(
          401, "not_authenticated", "log in, or send Authorization: Bearer <metrics token>");
    }
    light.run(
        ctx,
        () -> {
          return metrics.scrape(backend.stats(), deviceCounters());
        },
        text -> {
          ctx.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
          WriteDeadlines.end(ctx, Buffer.buffer(text));
        });
  }

  /** The backend's device counters; a failure to read them costs them, never the scrape. */
  private List<DeviceCounter> deviceCounters() {
    try {
      return backend.deviceCounters();
    } catch (RuntimeException e) {
      LOG.debug("device counters unreadable: {}", e.toString());
      return List.of();
    }
  }

  private boolean bearerOk(String header) {
    char[] token = config.metricsToken();
    if (token == null || header == null || !header.startsWith("Bearer ")) {
      return false;
    }
    byte[] expected = new String(token).getBytes(StandardCharsets.UTF_8);
    java.util.Arrays.fill(token, '\0');
    return MessageDigest.isEqual(
        expected, header.substring(7).trim().getBytes(StandardCharsets.UTF_8));
  }
}
