package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleUsers;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running admin console: an HTTPS server (Vert.x 5) with its own Vert.x instance. Start it with
 * {@link #start}, point a browser at {@link #url()}, {@link #close()} it when the host stops.
 *
 * <pre>{@code
 * Credential cert = ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(90));
 * try (ConsoleServer console =
 *     ConsoleServer.start(
 *         new ConsoleConfig().tls(cert, List.of(ca.certificate())),
 *         backend,
 *         new ConsoleUsers(authority::policy),
 *         new AuditTrail(auditLog))) {
 *   System.out.println("console at " + console.url());
 *   ...
 * }
 * }</pre>
 */
public final class ConsoleServer implements AutoCloseable {
  /** How long {@link #start} waits for the server to listen. */
  public static final Duration START_TIMEOUT = Duration.ofSeconds(30);

  /** How long {@link #close} waits for Vert.x to stop. */
  public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

  private static final Logger LOG = LoggerFactory.getLogger(ConsoleServer.class);

  private final Vertx vertx;
  private final ConsoleVerticle verticle;
  private final String url;
  private final int port;
  private volatile boolean closed;

  private ConsoleServer(Vertx vertx, ConsoleVerticle verticle, String url, int port) {
    this.vertx = vertx;
    this.verticle = verticle;
    this.url = url;
    this.port = port;
  }

  /**
   * Starts the console and waits until it listens.
   *
   * @param config the settings; {@link ConsoleConfig#conclude()} is called here
   * @param backend the running host
   * @param users the console users of the policy in force, e.g. {@code new
   *     ConsoleUsers(authority::policy)}: the same policy as {@code backend.policy()}, whose users'
   *     password hashes bind the login sessions (a changed hash ends them)
   * @param trail where the console audits logins, revocations and reloads
   * @return the running console
   * @throws ConsoleException if the settings are invalid or the server cannot listen
   */
  public static ConsoleServer start(
      ConsoleConfig config, ConsoleBackend backend, ConsoleUsers users, AuditTrail trail) {
    config.conclude();
    Objects.requireNonNull(backend, "backend");
    Objects.requireNonNull(users, "users");
    Objects.requireNonNull(trail, "trail");
    Vertx vertx = Vertx.vertx();
    ConsoleVerticle verticle = new ConsoleVerticle(config, backend, users, trail);
    try {
      vertx
          .deployVerticle(verticle)
          .toCompletionStage()
          .toCompletableFuture()
          .get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      closeQuietly(vertx);
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new ConsoleException(
          "cannot start the console on " + config.host() + ":" + config.port() + ": " + cause,
          cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeQuietly(vertx);
      throw new ConsoleException("interrupted while starting the console", e);
    }
    int port = verticle.actualPort();
    String host = config.host();
    if (host.equals("0.0.0.0") || host.equals("::")) {
      host = "127.0.0.1";
    } else if (host.indexOf(':') >= 0) {
      host = "[" + host + "]";
    }
    ConsoleServer s = new ConsoleServer(vertx, verticle, "https://" + host + ":" + port, port);
    LOG.info("admin console listening at {}", s.url);
    return s;
  }

  /** The console's address, e.g. {@code https://127.0.0.1:8443}. */
  public String url() {
    return url;
  }

  /** The port it listens on (the ephemeral one if the configured port was 0). */
  public int port() {
    return port;
  }

  /** Login sessions held now (tests). */
  int sessionCount() {
    return verticle.sessionCount();
  }

  /** Request body bytes the console has reserved now (at least what it buffers); for tests. */
  long bodyBytesReserved() {
    return verticle.bodyBytesReserved();
  }

  /** Heavy requests holding a place now, all users together (tests). */
  int heavyInFlight() {
    return verticle.heavyInFlight();
  }

  /** Stops the server and its Vert.x instance, waiting at most {@link #CLOSE_TIMEOUT}. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeQuietly(vertx);
  }

  private static void closeQuietly(Vertx vertx) {
    try {
      vertx
          .close()
          .toCompletionStage()
          .toCompletableFuture()
          .get(CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("console did not close cleanly within {}: {}", CLOSE_TIMEOUT, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
