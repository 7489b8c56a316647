package io.srdma.console;

import io.srdma.keys.Credential;
import io.srdma.keys.Pem;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Settings of the admin console. Fluent setters, then {@link #conclude()} checks them ({@link
 * ConsoleServer#start} calls it). The console serves HTTPS only, so a server certificate is
 * required: one the deployment CA issued ({@code DeploymentCa.issueServer(List.of("localhost",
 * "127.0.0.1"), ...)}), or an operator's PEM key and certificate chain.
 *
 * <p>Each setting has a {@code *_PROP_NAME} system property and a {@code *_DEFAULT}.
 */
public final class ConsoleConfig {
  /** System property of the bind address. */
  public static final String HOST_PROP_NAME = "srdma.console.host";

  /** Default bind address: loopback only; expose the console on purpose. */
  public static final String HOST_DEFAULT = "127.0.0.1";

  /** System property of the port. */
  public static final String PORT_PROP_NAME = "srdma.console.port";

  /** Default port: 0, an ephemeral port ({@link ConsoleServer#url()} tells which). */
  public static final int PORT_DEFAULT = 0;

  /** Default idle timeout of a login session. */
  public static final Duration SESSION_TIMEOUT_DEFAULT = Duration.ofMinutes(30);

  /**
   * Default absolute lifetime of a login session, however busy: a working day. A session kept alive
   * by polling (a stolen cookie, a tab left on the overview) ends then all the same.
   */
  public static final Duration SESSION_LIFETIME_DEFAULT = Duration.ofHours(8);

  /** Default number of login attempts per user and client address within the window. */
  public static final int LOGIN_ATTEMPTS_DEFAULT = 5;

  /** Default login rate-limit window. */
  public static final Duration LOGIN_WINDOW_DEFAULT = Duration.ofMinutes(5);

  /** Default interval between live updates on the overview page. */
  public static final Duration STREAM_INTERVAL_DEFAULT = Duration.ofSeconds(1);

  /**
   * Default time a client has to send a request's head (from its connection's opening or previous
   * exchange) and then its body (from its head): the idle timeout of a connection, which a client
   * sending a byte at a time keeps away.
   */
  public static final Duration REQUEST_READ_TIMEOUT_DEFAULT = Duration.ofSeconds(60);

  /** Longest {@link #requestReadTimeout(Duration)} accepted. */
  public static final Duration REQUEST_READ_TIMEOUT_MAX = Duration.ofHours(1);

  /**
   * Default time a client has to take each piece of a response the console is sending (nginx's
   * {@code send_timeout}): a client that stops reading holds its heavy-request place and its
   * answer's memory for at most this long.
   */
  public static final Duration RESPONSE_WRITE_TIMEOUT_DEFAULT = Duration.ofSeconds(60);

  /** Longest {@link #responseWriteTimeout(Duration)} accepted. */
  public static final Duration RESPONSE_WRITE_TIMEOUT_MAX = Duration.ofHours(1);

  /**
   * Default longest time an audit export may take to send, however steadily its client reads: 10
   * minutes. The write timeout alone lets a client that takes a piece just within it hold the
   * export's heavy-request place and open log file for hours; 10 minutes is about 6 GB at 10 MB/s
   * or 750 MB over a 10 Mbit/s link, more than an export the console's filters narrow down needs; a
   * user holding all four of its places with exports holds each for at most this long.
   */
  public static final Duration EXPORT_MAX_DURATION_DEFAULT = Duration.ofMinutes(10);

  /** Shortest {@link #exportMaxDuration(Duration)} accepted. */
  public static final Duration EXPORT_MAX_DURATION_MIN = Duration.ofSeconds(1);

  /** Longest {@link #exportMaxDuration(Duration)} accepted. */
  public static final Duration EXPORT_MAX_DURATION_MAX = Duration.ofDays(1);

  private String host = System.getProperty(HOST_PROP_NAME, HOST_DEFAULT);
  private int port = Integer.getInteger(PORT_PROP_NAME, PORT_DEFAULT);
  private Credential credential;
  private List<X509Certificate> chain = List.of();
  private Duration sessionTimeout = SESSION_TIMEOUT_DEFAULT;
  private Duration sessionLifetime = SESSION_LIFETIME_DEFAULT;
  private int loginAttempts = LOGIN_ATTEMPTS_DEFAULT;
  private Duration loginWindow = LOGIN_WINDOW_DEFAULT;
  private Duration streamInterval = STREAM_INTERVAL_DEFAULT;
  private char[] metricsToken;
  private Duration requestReadTimeout = REQUEST_READ_TIMEOUT_DEFAULT;
  private Duration responseWriteTimeout = RESPONSE_WRITE_TIMEOUT_DEFAULT;
  private Duration exportMaxDuration = EXPORT_MAX_DURATION_DEFAULT;

  /** Settings with every default; a certificate must still be set. */
  public ConsoleConfig() {}

  /**
   * The address to bind.
   *
   * @param host a host name or IP address
   * @return this
   */
  public ConsoleConfig host(String host) {
    this.host = host;
    return this;
  }

  /** The address to bind. */
  public String host() {
    return host;
  }

  /**
   * The port to bind; 0 for an ephemeral port.
   *
   * @param port 0..65535
   * @return this
   */
  public ConsoleConfig port(int port) {
    this.port = port;
    return this;
  }

  /** The port to bind; 0 for an ephemeral port. */
  public int port() {
    return port;
  }

  /**
   * The server certificate and key, e.g. from {@code DeploymentCa.issueServer}.
   *
   * @param credential the certificate and its key
   * @param chain the issuing certificates to send after it (the deployment CA certificate), may be
   *     empty
   * @return this
   */
  public ConsoleConfig tls(Credential credential, List<X509Certificate> chain) {
    this.credential = credential;
    this.chain = List.copyOf(chain);
    return this;
  }

  /**
   * The server certificate and key from an operator's PEM files.
   *
   * @param certificateChainFile the certificate, then any issuing certificates
   * @param keyFile the PKCS#8 private key, optionally encrypted
   * @param passphrase the key's passphrase, or null if it is not encrypted; not kept
   * @return this
   * @throws io.srdma.keys.KeyExchangeException if a file cannot be read
   */
  public ConsoleConfig pem(Path certificateChainFile, Path keyFile, char[] passphrase) {
    List<X509Certificate> certs = Pem.readCertificates(certificateChainFile);
    if (certs.isEmpty()) {
      throw new ConsoleException("no certificate in " + certificateChainFile);
    }
    PrivateKey key = Pem.readPrivateKey(keyFile, passphrase);
    return tls(Credential.of(certs.get(0), key), certs.subList(1, certs.size()));
  }

  /** The server credential, or null if none is set. */
  public Credential credential() {
    return credential;
  }

  /** The issuing certificates sent after the server certificate. */
  public List<X509Certificate> chain() {
    return chain;
  }

  /**
   * How long a login session lasts without requests.
   *
   * @param timeout positive
   * @return this
   */
  public ConsoleConfig sessionTimeout(Duration timeout) {
    this.sessionTimeout = timeout;
    return this;
  }

  /** How long a login session lasts without requests. */
  public Duration sessionTimeout() {
    return sessionTimeout;
  }

  /**
   * How long a login session lasts at most, counted from its login, however many requests it makes;
   * then it is refused like any request without a login, and the user logs in again.
   *
   * @param lifetime positive
   * @return this
   */
  public ConsoleConfig sessionLifetime(Duration lifetime) {
    this.sessionLifetime = lifetime;
    return this;
  }

  /** How long a login session lasts at most, counted from its login. */
  public Duration sessionLifetime() {
    return sessionLifetime;
  }

  /**
   * The login rate limit: at most {@code attempts} failed logins per user name and client address
   * within {@code window}; more are answered 429 until the window has passed.
   *
   * @param attempts at least 1
   * @param window positive
   * @return this
   */
  public ConsoleConfig loginLimit(int attempts, Duration window) {
    this.loginAttempts = attempts;
    this.loginWindow = window;
    return this;
  }

  /** Failed logins allowed per user and address within {@link #loginWindow()}. */
  public int loginAttempts() {
    return loginAttempts;
  }

  /** The login rate-limit window. */
  public Duration loginWindow() {
    return loginWindow;
  }

  /**
   * How often the overview's live stream sends a snapshot.
   *
   * @param interval at least 50 ms
   * @return this
   */
  public ConsoleConfig streamInterval(Duration interval) {
    this.streamInterval = interval;
    return this;
  }

  /** How often the overview's live stream sends a snapshot. */
  public Duration streamInterval() {
    return streamInterval;
  }

  /**
   * How long a client may take to send a request's head, counted from its connection's opening or
   * the end of its previous exchange (else the connection is closed), and then its body, counted
   * from its head (else {@code 408 request_timeout} and the connection is closed; the body's budget
   * is given back). Sending a byte at a time does not extend it.
   *
   * @param timeout at least 100 ms, at most {@link #REQUEST_READ_TIMEOUT_MAX}
   * @return this
   */
  public ConsoleConfig requestReadTimeout(Duration timeout) {
    this.requestReadTimeout = timeout;
    return this;
  }

  /** How long a client may take to send a request's head, then its body. */
  public Duration requestReadTimeout() {
    return requestReadTimeout;
  }

  /**
   * How long a client may leave the response it is being sent untaken: while some of it waits to be
   * sent, a piece of it (at most 16 KiB) must go out within this time of its being written or of
   * the previous piece going out. Else the connection is closed, what was not sent is dropped and
   * the response abandoned (an export's heavy-request place given back). A piece goes out when the
   * kernel takes more, each time about a third of the connection's socket send buffer has drained
   * (Linux grows it up to 4 MiB by default): a client that keeps taking that much per timeout is
   * not cut by it, however long its answer (an export is bounded as a whole by {@link
   * #exportMaxDuration}).
   *
   * @param timeout at least 100 ms, at most {@link #RESPONSE_WRITE_TIMEOUT_MAX}
   * @return this
   */
  public ConsoleConfig responseWriteTimeout(Duration timeout) {
    this.responseWriteTimeout = timeout;
    return this;
  }

  /** How long a piece of a response may wait for its client to take it. */
  public Duration responseWriteTimeout() {
    return responseWriteTimeout;
  }

  /**
   * How long an audit export may take, counted from its response's start, however steadily its
   * client reads: an export still sending then has its connection closed like one its client left
   * untaken past the {@link #responseWriteTimeout write timeout}, its heavy-request place and log
   * file given back (the client sees a download cut short, never a complete-looking one). A larger
   * log is exported in parts with the {@code from}/{@code to} filters, or with a longer maximum.
   *
   * @param max from {@link #EXPORT_MAX_DURATION_MIN} to {@link #EXPORT_MAX_DURATION_MAX}
   * @return this
   */
  public ConsoleConfig exportMaxDuration(Duration max) {
    this.exportMaxDuration = max;
    return this;
  }

  /** How long an audit export may take, however steadily its client reads. */
  public Duration exportMaxDuration() {
    return exportMaxDuration;
  }

  /**
   * A bearer token that lets a Prometheus scraper read {@code /metrics} without logging in. Without
   * one, {@code /metrics} needs a console login like every other page.
   *
   * @param token at least 32 characters; copied
   * @return this
   */
  public ConsoleConfig metricsToken(char[] token) {
    this.metricsToken = token == null ? null : token.clone();
    return this;
  }

  /** A copy of the metrics token, or null if none is set. */
  char[] metricsToken() {
    return metricsToken == null ? null : metricsToken.clone();
  }

  /**
   * Checks the settings.
   *
   * @return this
   * @throws ConsoleException naming the first bad setting
   */
  public ConsoleConfig conclude() {
    if (host == null || host.isBlank()) {
      throw new ConsoleException("host must be set");
    }
    if (port < 0 || port > 65535) {
      throw new ConsoleException("port out of range: " + port);
    }
    if (credential == null) {
      throw new ConsoleException(
          "the console serves HTTPS only: set a certificate with tls(...) or pem(...)");
    }
    if (sessionTimeout == null || sessionTimeout.isNegative() || sessionTimeout.isZero()) {
      throw new ConsoleException("sessionTimeout must be positive: " + sessionTimeout);
    }
    if (sessionLifetime == null || sessionLifetime.isNegative() || sessionLifetime.isZero()) {
      throw new ConsoleException("sessionLifetime must be positive: " + sessionLifetime);
    }
    if (loginAttempts < 1
        || loginWindow == null
        || loginWindow.isNegative()
        || loginWindow.isZero()) {
      throw new ConsoleException(
          "loginLimit needs attempts >= 1 and a positive window: "
              + loginAttempts
              + ", "
              + loginWindow);
    }
    if (streamInterval == null || streamInterval.toMillis() < 50) {
      throw new ConsoleException("streamInterval must be at least 50 ms: " + streamInterval);
    }
    if (requestReadTimeout == null
        || requestReadTimeout.compareTo(Duration.ofMillis(100)) < 0
        || requestReadTimeout.compareTo(REQUEST_READ_TIMEOUT_MAX) > 0) {
      throw new ConsoleException(
          "requestReadTimeout must be from 100 ms to "
              + REQUEST_READ_TIMEOUT_MAX
              + ": "
              + requestReadTimeout);
    }
    if (responseWriteTimeout == null
        || responseWriteTimeout.compareTo(Duration.ofMillis(100)) < 0
        || responseWriteTimeout.compareTo(RESPONSE_WRITE_TIMEOUT_MAX) > 0) {
      throw new ConsoleException(
          "responseWriteTimeout must be from 100 ms to "
              + RESPONSE_WRITE_TIMEOUT_MAX
              + ": "
              + responseWriteTimeout);
    }
    if (exportMaxDuration == null
        || exportMaxDuration.compareTo(EXPORT_MAX_DURATION_MIN) < 0
        || exportMaxDuration.compareTo(EXPORT_MAX_DURATION_MAX) > 0) {
      throw new ConsoleException(
          "exportMaxDuration must be from "
              + EXPORT_MAX_DURATION_MIN
              + " to "
              + EXPORT_MAX_DURATION_MAX
              + ": "
              + exportMaxDuration);
    }
    if (metricsToken != null && metricsToken.length < 32) {
      throw new ConsoleException("metricsToken must be at least 32 characters");
    }
    return this;
  }

  /** All certificates to present: the server certificate, then the chain. */
  List<X509Certificate> certificates() {
    List<X509Certificate> all = new ArrayList<>();
    all.add(credential.certificate());
    all.addAll(chain);
    return all;
  }

  @Override
  public String toString() {
    return "ConsoleConfig[https://"
        + host
        + ":"
        + port
        + ", "
        + credential
        + ", metricsToken="
        + (metricsToken == null ? "none" : "set")
        + ", loginLimit="
        + loginAttempts
        + "/"
        + loginWindow
        + "]";
  }
}
