package io.srdma.console;

import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.ext.web.RoutingContext;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * Login sessions, kept in memory. A session exists only after a successful login, so requests
 * without one cost no memory (Vert.x's session handler stores a session for every cookieless
 * request). At most {@link #MAX_SESSIONS}; when full, the least recently used goes.
 *
 * <p>A session ends after its idle timeout without requests, and at its absolute lifetime counted
 * from the login however busy it is (a cookie kept alive by polling does not live for ever). An
 * ended session is forgotten: its cookie then gets what a request without a login gets.
 *
 * <p>The cookie {@value #COOKIE} holds 256 random bits and is {@code Secure}, {@code HttpOnly},
 * {@code SameSite=Strict}, {@code Path=/}, without {@code Domain} (the {@code __Host-} prefix makes
 * browsers insist on that) and without {@code Max-Age} (gone when the browser closes).
 */
final class ConsoleSessions {
  /** {@code __Host-}: the browser insists on Secure, Path=/ and no Domain. */
  static final String COOKIE = "__Host-srdma-session";

  static final int MAX_SESSIONS = 1024;

  /**
   * Sessions one user may hold; a login beyond ends that user's least recently used one, so that
   * one user logging in over and over cannot push the others' sessions out of {@link
   * #MAX_SESSIONS}.
   */
  static final int MAX_SESSIONS_PER_USER = 16;

  private static final String KEY = "srdma.session";

  /**
   * One login: the user, the fingerprint of the credential it logged in with (see {@link
   * AuthRoutes#credentialOf}; never the hash itself) and the CSRF token of its state changes.
   */
  static final class Session {
    final String id;
    final String user;
    final byte[] credential;
    final String csrf;
    final long started;
    long lastSeen;

    Session(String id, String user, byte[] credential, String csrf, long now) {
      this.id = id;
      this.user = user;
      this.credential = credential.clone();
      this.csrf = csrf;
      this.started = now;
      this.lastSeen = now;
    }
  }

  private final long timeoutMillis;
  private final long lifetimeMillis;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();
  // access order: the first entry is the least recently used
  private final LinkedHashMap<String, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);

  /** Sessions with the {@linkplain ConsoleConfig#SESSION_LIFETIME_DEFAULT default lifetime}. */
  ConsoleSessions(Duration timeout, Clock clock) {
    this(timeout, ConsoleConfig.SESSION_LIFETIME_DEFAULT, clock);
  }

  /**
   * @param timeout the idle timeout
   * @param lifetime the absolute lifetime, from the login
   */
  ConsoleSessions(Duration timeout, Duration lifetime, Clock clock) {
    this.timeoutMillis = timeout.toMillis();
    this.lifetimeMillis = lifetime.toMillis();
    this.clock = clock;
  }

  /** Route handler: attaches the request's live session, if any, for {@link #of}. */
  void attach(RoutingContext ctx) {
    Cookie c = ctx.request().getCookie(COOKIE);
    if (c != null) {
      Session s = lookup(c.getValue());
      if (s != null) {
        ctx.put(KEY, s);
      }
    }
    ctx.next();
  }

  /** The request's session, or null if it has none. */
  static Session of(RoutingContext ctx) {
    return ctx.get(KEY);
  }

  /**
   * Starts a session for a user who just logged in (ending the request's old one) and sets its
   * cookie.
   *
   * @param credential the fingerprint of the credential the user logged in with
   */
  synchronized Session start(RoutingContext ctx, String user, byte[] credential) {
    Session old = of(ctx);
    if (old != null) {
      sessions.remove(old.id);
    }
    long now = clock.millis();
    purge(now);
    // one user's logins push out only that user's own sessions, never another's (an admin's)
    int own = 0;
    for (Session x : sessions.values()) {
      if (x.user.equals(user)) {
        own++;
      }
    }
    for (Iterator<Session> it = sessions.values().iterator();
        own >= MAX_SESSIONS_PER_USER && it.hasNext(); ) {
      if (it.next().user.equals(user)) {
        it.remove();
        own--;
      }
    }
    while (sessions.size() >= MAX_SESSIONS) {
      Iterator<Session> lru = sessions.values().iterator();
      lru.next();
      lru.remove();
    }
    Session s = new Session(token(), user, credential, token(), now);
    sessions.put(s.id, s);
    ctx.put(KEY, s);
    ctx.response().addCookie(cookie(s.id));
    return s;
  }

  /**
   * Ends the request's session and clears its cookie.
   *
   * @return whether this call ended it: false if the request had none, or it had already ended (a
   *     concurrent logout, expiry, eviction)
   */
  synchronized boolean end(RoutingContext ctx) {
    Session s = of(ctx);
    boolean ended = false;
    if (s != null) {
      ended = sessions.remove(s.id) != null;
      ctx.remove(KEY);
    }
    ctx.response().addCookie(cookie("").setMaxAge(0));
    return ended;
  }

  /**
   * Whether a session is still held, not idle past the timeout and not past its lifetime, without
   * counting this as a use: a long-lived response (the event stream) asks this before each write.
   * An expired session is dropped.
   */
  synchronized boolean live(Session s) {
    // containsKey, not get: get would count as a use in the access order
    if (!sessions.containsKey(s.id)) {
      return false;
    }
    if (expired(s, clock.millis())) {
      sessions.remove(s.id);
      return false;
    }
    return true;
  }

  /** Ends a session outside of a request of its own (its cookie is cleared on its next request). */
  synchronized void drop(Session s) {
    sessions.remove(s.id);
  }

  synchronized int size() {
    return sessions.size();
  }

  private synchronized Session lookup(String id) {
    Session s = sessions.get(id);
    if (s == null) {
      return null;
    }
    long now = clock.millis();
    if (expired(s, now)) {
      sessions.remove(id);
      return null;
    }
    s.lastSeen = now;
    return s;
  }

  private void purge(long now) {
    sessions.values().removeIf(s -> expired(s, now));
  }

  /** Idle past the timeout, or past its lifetime however busy. */
  private boolean expired(Session s, long now) {
    return now - s.lastSeen >= timeoutMillis || now - s.started >= lifetimeMillis;
  }

  private String token() {
    byte[] b = new byte[32];
    random.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  private static Cookie cookie(String value) {
    return Cookie.cookie(COOKIE, value)
        .setPath("/")
        .setSecure(true)
        .setHttpOnly(true)
        .setSameSite(CookieSameSite.STRICT);
  }
}
