package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleAuthResult;
import io.srdma.policy.ConsoleRole;
import io.srdma.policy.ConsoleUser;
import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.Policy;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * Login, logout (both audited), and the guards every API route passes: logged in (else 401), CSRF
 * token on state changes (else 403), admin role for admin actions (else 403).
 *
 * <p>CSRF: a synchronizer token. Login keeps 32 random bytes in the server-side session and returns
 * them; the UI sends them back in {@value #CSRF_HEADER} on every POST, PUT and DELETE, compared in
 * constant time. The session cookie is also {@code SameSite=Strict}. Login itself has no session
 * yet: it accepts only {@code application/json} (a cross-site form cannot send that without a CORS
 * preflight, which the console never answers) and refuses a foreign {@code Origin}.
 *
 * <p>Login cost: {@link LoginLimiter} limits attempts per user and address and per address, and at
 * most {@value #MAX_CONCURRENT_HASHES} password checks run at once; another attempt meanwhile is
 * answered 429 {@code login_busy} with {@code Retry-After: 1} at once, and not counted.
 *
 * <p>A session is bound to the credential it logged in with: it keeps the SHA-256 of the user's
 * {@code password-hash} string ({@link #credentialOf}), and every request checks it against the
 * policy in force. A changed password (a new hash), a removed user, or one removed and added again
 * with a new hash ends the session (401): rotating a leaked password also locks out whoever holds a
 * session made with it.
 */
final class AuthRoutes {
  static final String USER = "srdma.user";
  static final String CSRF_HEADER = "X-CSRF-Token";
  private static final int MAX_USER_CHARS = 128;
  // bounds the hash work one request can cause
  private static final int MAX_PASSWORD_CHARS = 1024;

  /** Password checks (each an Argon2id or bcrypt hash) that may run at once. */
  static final int MAX_CONCURRENT_HASHES = 2;

  private final Semaphore hashPermits = new Semaphore(MAX_CONCURRENT_HASHES);

  private final ConsoleUsers users;
  private final Supplier<Policy> policy;
  private final AuditTrail trail;
  private final LoginLimiter limiter;
  private final ConsoleMetrics metrics;
  private final ConsoleSessions sessions;
  private final WorkerExecutor prompt;

  /**
   * @param users checks passwords and roles
   * @param policy the policy in force, the same one {@code users} reads (its users' hashes bind the
   *     sessions)
   * @param prompt the console's pool for logins, logouts and revokes ({@link
   *     ConsoleVerticle#PROMPT_EXECUTOR}), apart from the worker pool the other routes share
   */
  AuthRoutes(
      ConsoleUsers users,
      Supplier<Policy> policy,
      AuditTrail trail,
      LoginLimiter limiter,
      ConsoleMetrics metrics,
      ConsoleSessions sessions,
      WorkerExecutor prompt) {
    this.sessions = sessions;
    this.prompt = prompt;
    this.users = users;
    this.policy = policy;
    this.trail = trail;
    this.limiter = limiter;
    this.metrics = metrics;
  }

  /** The logged-in user of a request that passed {@link #requireLogin}. */
  static String user(RoutingContext ctx) {
    return ctx.get(USER);
  }

  void login(RoutingContext ctx) {
    checkOrigin(ctx);
    JsonObject body = Http.body(ctx);
    String user = Http.string(body, "user");
    String password = Http.string(body, "password");
    if (user.isEmpty() || user.length() > MAX_USER_CHARS) {
      throw ApiException.badRequest(
          "field 'user' must hold 1 to " + MAX_USER_CHARS + " characters");
    }
    if (password.length() > MAX_PASSWORD_CHARS) {
      throw ApiException.badRequest(
          "field 'password' must hold at most " + MAX_PASSWORD_CHARS + " characters");
    }
    String remote = ctx.request().remoteAddress().host();
    long wait = limiter.tryAcquire(user, remote);
    if (wait > 0) {
      metrics.loginRateLimited.increment();
      throw ApiException.tooMany(
          "too many login attempts for this user or from this address; try again in " + wait + " s",
          wait);
    }
    // each check costs a 64 MiB Argon2id hash in the host's JVM: at most a few at once, and the
    // rest are told to come back rather than queued without bound
    if (!hashPermits.tryAcquire()) {
      limiter.cancelled(user, remote);
      metrics.loginRateLimited.increment();
      ApiException busy =
          new ApiException(
              429, "login_busy", "too many logins are being checked right now; try again in 1 s");
      busy.retryAfterSeconds = 1;
      throw busy;
    }
    char[] pw = password.toCharArray();
    Blocking.runOn(
        ctx,
        prompt,
        () -> {
          try {
            // taken before the check: a hash changed meanwhile ends the session on its first use
            byte[] credential = credentialOf(policy.get(), user);
            ConsoleAuthResult r = users.authenticate(user, pw); // wipes pw
            trail.consoleLogin(r, remote); // fails closed: no audit line, no session
            return new Checked(r, credential);
          } finally {
            hashPermits.release();
          }
        },
        c -> {
          if (!c.result.succeeded()) {
            metrics.loginFailure.increment();
            throw new ApiException(401, "bad_credentials", "wrong user name or password");
          }
          if (!holdsCredential(user, c.credential)) {
            // the policy changed between reading the hash and checking the password
            metrics.loginFailure.increment();
            throw new ApiException(
                401,
                "not_authenticated",
                "user '" + user + "' changed in the policy during the login; log in again");
          }
          metrics.loginSuccess.increment();
          limiter.succeeded(user, remote);
          ConsoleSessions.Session s = sessions.start(ctx, user, c.credential); // always a new id
          Http.json(ctx, 200, me(user, s.csrf));
        });
  }

  /** A password check and the credential it was made against (null: no such user then). */
  private record Checked(ConsoleAuthResult result, byte[] credential) {}

  long loginFailures() {
    return (long) metrics.loginFailure.count();
  }

  /**
   * Ends the request's session and audits it like the login ({@link AuditTrail#consoleLogout}). The
   * session ends first: a logout is never prevented by the audit log (if the line cannot be written
   * the answer is 500, the session ended all the same). Of logouts of one session that race, the
   * one that ended it writes the line; the others answer 204 and write nothing.
   */
  void logout(RoutingContext ctx) {
    String user = user(ctx);
    String remote = ctx.request().remoteAddress().host();
    if (!sessions.end(ctx)) {
      ctx.response().setStatusCode(204);
      WriteDeadlines.end(ctx, Buffer.buffer());
      return;
    }
    Blocking.runOn(
        ctx,
        prompt,
        () -> trail.consoleLogout(user, remote),
        head -> {
          ctx.response().setStatusCode(204);
          WriteDeadlines.end(ctx, Buffer.buffer());
        });
  }

  void me(RoutingContext ctx) {
    Http.json(ctx, 200, me(user(ctx), ConsoleSessions.of(ctx).csrf));
  }

  /**
   * API guard: a logged-in user who still has, in the policy in force, the credential the session
   * logged in with and a console role.
   */
  void requireLogin(RoutingContext ctx) {
    ConsoleSessions.Session s = ConsoleSessions.of(ctx);
    if (s == null) {
      throw new ApiException(401, "not_authenticated", "log in first (POST /api/login)");
    }
    String user = s.user;
    if (!holdsCredential(user, s.credential)) {
      sessions.end(ctx);
      throw new ApiException(
          401,
          "not_authenticated",
          "the password of user '"
              + user
              + "' changed, or the user was removed, since this login; log in again");
    }
    if (!hasConsoleRole(user)) {
      sessions.end(ctx); // removed from the policy since login
      throw new ApiException(
          401, "not_authenticated", "user '" + user + "' holds no console role any more");
    }
    ctx.put(USER, user);
    ctx.next();
  }

  /** State changes need the session's CSRF token in {@value #CSRF_HEADER}. */
  void requireCsrf(RoutingContext ctx) {
    HttpMethod m = ctx.request().method();
    if (HttpMethod.GET.equals(m) || HttpMethod.HEAD.equals(m) || HttpMethod.OPTIONS.equals(m)) {
      ctx.next();
      return;
    }
    String expected = ConsoleSessions.of(ctx).csrf;
    String given = ctx.request().getHeader(CSRF_HEADER);
    if (expected == null
        || given == null
        || !MessageDigest.isEqual(
            expected.getBytes(StandardCharsets.US_ASCII), given.getBytes(StandardCharsets.UTF_8))) {
      throw new ApiException(
          403,
          "csrf",
          given == null
              ? "missing " + CSRF_HEADER + " header (the token from /api/login or /api/me)"
              : "wrong " + CSRF_HEADER + " token");
    }
    ctx.next();
  }

  /** Admin actions: 403 for an auditor. */
  void requireAdmin(RoutingContext ctx) {
    String user = user(ctx);
    if (!users.hasRole(user, ConsoleRole.ADMIN)) {
      throw new ApiException(
          403, "forbidden", "user '" + user + "' is not an admin; auditors can only read");
    }
    ctx.next();
  }

  /** HTML pages other than the login page send a visitor without a session to log in. */
  void pageGuard(RoutingContext ctx) {
    String path = ctx.normalizedPath();
    boolean page = path.equals("/") || path.endsWith(".html");
    if (page && !path.equals("/login.html") && ConsoleSessions.of(ctx) == null) {
      ctx.redirect("/login.html");
      return;
    }
    ctx.next();
  }

  /** Whether a user holds a console role in the policy in force. */
  boolean hasConsoleRole(String user) {
    return users.hasRole(user, ConsoleRole.ADMIN) || users.hasRole(user, ConsoleRole.AUDITOR);
  }

  /**
   * Whether a session is still good: its user has the same credential and a console role in the
   * policy in force.
   */
  boolean stillValid(ConsoleSessions.Session s) {
    return holdsCredential(s.user, s.credential) && hasConsoleRole(s.user);
  }

  /**
   * Whether a session may still be served: not logged out or expired ({@link ConsoleSessions#live})
   * and {@link #stillValid}. A session no longer valid is ended. Long-lived responses ask this
   * before each write, since {@link #requireLogin} checked only their start.
   */
  boolean live(ConsoleSessions.Session s) {
    if (s == null || !sessions.live(s)) {
      return false;
    }
    if (!stillValid(s)) {
      sessions.drop(s);
      return false;
    }
    return true;
  }

  /** Whether the policy in force has the user with this credential fingerprint. */
  private boolean holdsCredential(String user, byte[] credential) {
    byte[] now = credentialOf(policy.get(), user);
    return credential != null && now != null && MessageDigest.isEqual(credential, now);
  }

  /**
   * The fingerprint of a user's credential in a policy: the SHA-256 of its {@code password-hash}
   * string (salted, so a new password, or the same one hashed again, gives a new fingerprint), or
   * null if the policy has no such user. Sessions keep this, never the hash.
   */
  static byte[] credentialOf(Policy p, String user) {
    ConsoleUser u = p.consoleUsers().get(user);
    if (u == null) {
      return null;
    }
    try {
      return MessageDigest.getInstance("SHA-256")
          .digest(u.passwordHash().getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  private void checkOrigin(RoutingContext ctx) {
    String origin = ctx.request().getHeader("Origin");
    String host = ctx.request().getHeader("Host");
    if (origin != null && (host == null || !origin.equalsIgnoreCase("https://" + host))) {
      throw new ApiException(403, "csrf", "login from a foreign origin refused: " + origin);
    }
  }

  private JsonObject me(String user, String token) {
    JsonArray roles = new JsonArray();
    for (ConsoleRole r : ConsoleRole.values()) {
      if (users.hasRole(user, r)) {
        roles.add(r.token());
      }
    }
    return new JsonObject()
        .put("user", user)
        .put("roles", roles)
        .put("admin", users.hasRole(user, ConsoleRole.ADMIN))
        .put("csrf", token);
  }
}
