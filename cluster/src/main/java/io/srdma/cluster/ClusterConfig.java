package io.srdma.cluster;

import io.srdma.keys.BoundedFileOpen;
import io.srdma.policy.BoundedYaml;
import io.srdma.policy.Printable;
import io.srdma.policy.Units;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * The optional {@code cluster:} section of a serve configuration (docs/cluster.md): where etcd is,
 * the client certificate (issued by the deployment CA) this host presents to it over mutual TLS,
 * the CA that signed etcd's server certificates, and the key prefix of this deployment.
 *
 * <pre>
 * cluster:
 *   endpoints: [https://10.0.0.1:2379, https://10.0.0.2:2379, https://10.0.0.3:2379]
 *   ca-certificate: /etc/srdma/ca.crt
 *   certificate: /etc/srdma/etcd-client.crt
 *   key: /etc/srdma/etcd-client.key
 *   key-passphrase-file: /etc/srdma/etcd-client.pass   # optional
 *   prefix: /srdma/prod
 *   host: h1                                             # optional: the host's name
 *   server-name: etcd.example                            # optional: TLS name every member has
 *   request-timeout: 2s                                  # optional, default 2s
 *   watch-check-period: 2s                               # optional, default 2s
 * </pre>
 *
 * Errors are collected, never thrown one at a time: each is {@code file:line:column: key: reason}.
 */
public final class ClusterConfig {
  /** The largest configuration file read, in bytes. */
  static final int MAX_FILE_BYTES = 1 << 20;

  /** The most YAML nodes in a configuration file. */
  static final int MAX_NODES = 20_000;

  /** The name of the threads that open the file. */
  static final String OPEN_THREAD_NAME = "srdma-cluster-config-open";

  /** For tests: runs after the file's check and before its open. Null in production. */
  static volatile Consumer<Path> beforeOpen;

  private static final BoundedFileOpen OPEN =
      new BoundedFileOpen(
          OPEN_THREAD_NAME,
          BoundedFileOpen.Refusals.worded((f, what, cause) -> bad(List.of(f + ": " + what))),
          () -> beforeOpen,
          () -> null);

  /** Default deadline of one etcd request. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(2);

  /** Default period at which each open watch is asked to prove it still delivers. */
  public static final Duration DEFAULT_WATCH_CHECK_PERIOD = Duration.ofSeconds(2);

  /** Shortest watch check period accepted. */
  public static final Duration MIN_WATCH_CHECK_PERIOD = Duration.ofMillis(100);

  /** Longest watch check period accepted. */
  public static final Duration MAX_WATCH_CHECK_PERIOD = Duration.ofMinutes(1);

  static final List<String> KEYS =
      List.of(
          "endpoints",
          "ca-certificate",
          "certificate",
          "key",
          "key-passphrase-file",
          "prefix",
          "host",
          "server-name",
          "request-timeout",
          "watch-check-period");
  private static final List<String> REQUIRED =
      List.of("endpoints", "ca-certificate", "certificate", "key", "prefix");
  private static final Pattern PREFIX = Pattern.compile("(/[a-zA-Z0-9_.-]{1,64}){1,8}");
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,62}");
  private static final int MAX_ENDPOINTS = 16;
  private static final int MAX_ERROR_CHARS = 1000;

  private final List<URI> endpoints;
  private final Path caCertificate;
  private final Path certificate;
  private final Path key;
  private final Path keyPassphraseFile;
  private final String prefix;
  private final String host;
  private final String serverName;
  private final Duration requestTimeout;
  private final Duration watchCheckPeriod;

  private ClusterConfig(Builder b) {
    this.endpoints = List.copyOf(b.endpoints);
    this.caCertificate = b.caCertificate;
    this.certificate = b.certificate;
    this.key = b.key;
    this.keyPassphraseFile = b.keyPassphraseFile;
    this.prefix = b.prefix;
    this.host = b.host;
    this.serverName = b.serverName;
    this.requestTimeout = b.requestTimeout;
    this.watchCheckPeriod = b.watchCheckPeriod;
  }

  /** A configuration built in code (tests, tools). */
  public static Builder builder() {
    return new Builder();
  }

  /** etcd's client URLs, {@code https} only. */
  public List<URI> endpoints() {
    return endpoints;
  }

  /** The CA certificate etcd's server certificates are checked against. */
  public Path caCertificate() {
    return caCertificate;
  }

  /** This process's client certificate for etcd. */
  public Path certificate() {
    return certificate;
  }

  /** The private key of {@link #certificate()}. */
  public Path key() {
    return key;
  }

  /** The file holding the key's passphrase, or null for an unencrypted key. */
  public Path keyPassphraseFile() {
    return keyPassphraseFile;
  }

  /** The deployment's key prefix, e.g. {@code /srdma/prod}, no trailing slash. */
  public String prefix() {
    return prefix;
  }

  /** The host's name in the cluster, or null (then the host certificate's name is used). */
  public String host() {
    return host;
  }

  /** The TLS server name to check on every member's certificate, or null (each endpoint's). */
  public String serverName() {
    return serverName;
  }

  /** The deadline of one etcd request. */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /**
   * How often each open watch is asked for progress ({@link WatchLiveness}): a watch that does not
   * answer within {@link #requestTimeout()}, or answers from behind a revision this host already
   * read, is taken as lost.
   */
  public Duration watchCheckPeriod() {
    return watchCheckPeriod;
  }

  /** A builder holding this configuration (tests and tools change one setting). */
  Builder toBuilder() {
    Builder b = new Builder();
    b.endpoints.addAll(endpoints);
    b.caCertificate = caCertificate;
    b.certificate = certificate;
    b.key = key;
    b.keyPassphraseFile = keyPassphraseFile;
    b.prefix = prefix;
    b.host = host;
    b.serverName = serverName;
    b.requestTimeout = requestTimeout;
    b.watchCheckPeriod = watchCheckPeriod;
    return b;
  }

  /** The key layout of this deployment. */
  public ClusterKeys keys() {
    return new ClusterKeys(prefix);
  }

  /**
   * Reads the {@code cluster:} section of a YAML file (a serve configuration, or a file holding
   * only that section; other top-level keys are not this reader's business). Relative paths are
   * resolved against the file's directory.
   *
   * @throws ClusterException {@link ClusterException.Reason#BAD_CONFIG} listing every error
   */
  public static ClusterConfig read(Path file) {
    String label = file.toString();
    String text;
    // a link is followed (Kubernetes mounts a ConfigMap's files through links); the target must be
    // a regular file, and a FIFO or another file swapped in is refused, never waited on for ever
    try (FileChannel ch = OPEN.read(file, BoundedFileOpen.Links.FOLLOW, null);
        InputStream in = Channels.newInputStream(ch)) {
      byte[] raw = in.readNBytes(MAX_FILE_BYTES + 1);
      if (raw.length > MAX_FILE_BYTES) {
        throw bad(List.of(label + ": larger than 1 MiB; not a configuration file"));
      }
      // strict, as Files.readString was: malformed UTF-8 is an error
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(raw))
              .toString();
    } catch (NoSuchFileException e) {
      throw bad(List.of(label + ": no such file (or not a regular file)"));
    } catch (IOException e) {
      throw bad(List.of(label + ": cannot read: " + e.getMessage()));
    }
    Node root;
    try {
      root = BoundedYaml.compose(label, text, MAX_FILE_BYTES, MAX_NODES);
    } catch (BoundedYaml.RejectedException e) {
      List<String> errors = new ArrayList<>();
      for (BoundedYaml.Problem p : e.problems()) {
        add(errors, label + ":" + p.line() + ":" + p.column() + ": " + p.reason());
      }
      throw bad(errors);
    }
    if (!(root instanceof MappingNode m)) {
      throw bad(List.of(label + ": the file must be a mapping with a 'cluster' key"));
    }
    for (NodeTuple t : m.getValue()) {
      if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("cluster")) {
        List<String> errors = new ArrayList<>();
        Path base = file.toAbsolutePath().getParent();
        ClusterConfig c = parse(t.getValueNode(), label, base, errors);
        if (!errors.isEmpty()) {
          throw bad(errors);
        }
        return c;
      }
    }
    throw bad(List.of(label + ": no 'cluster' section; this deployment is not clustered"));
  }

  /**
   * Parses the value of a {@code cluster:} key, adding each error to {@code errors} as {@code
   * label:line:column: cluster.KEY: reason}.
   *
   * @param node the section's value
   * @param label the file name used in errors
   * @param base the directory relative paths are resolved against
   * @param errors where errors go
   * @return the configuration, or null if there were errors
   */
  public static ClusterConfig parse(Node node, String label, Path base, List<String> errors) {
    int before = errors.size();
    if (!(node instanceof MappingNode m)) {
      add(errors, at(label, node, "cluster") + ": must be a mapping");
      return null;
    }
    Map<String, Node> f = new LinkedHashMap<>();
    for (NodeTuple t : m.getValue()) {
      if (!(t.getKeyNode() instanceof ScalarNode k)) {
        add(errors, at(label, t.getKeyNode(), "cluster") + ": keys must be plain words");
        continue;
      }
      String name = k.getValue();
      if (!KEYS.contains(name)) {
        add(
            errors,
            at(label, k, "cluster." + name)
                + ": unknown key (expected one of "
                + String.join(", ", KEYS)
                + ")");
      } else if (f.put(name, t.getValueNode()) != null) {
        add(errors, at(label, k, "cluster." + name) + ": duplicate key");
      }
    }
    for (String r : REQUIRED) {
      if (!f.containsKey(r)) {
        add(errors, at(label, m, "cluster") + ": missing required key '" + r + "'");
      }
    }
    Builder b = new Builder();
    Node e = f.get("endpoints");
    if (e != null) {
      List<Node> items =
          e instanceof SequenceNode s
              ? s.getValue()
              : e instanceof ScalarNode ? List.of(e) : List.of();
      if (items.isEmpty()) {
        add(errors, at(label, e, "cluster.endpoints") + ": must list at least one https URL");
      } else if (items.size() > MAX_ENDPOINTS) {
        add(
            errors,
            at(label, e, "cluster.endpoints") + ": more than " + MAX_ENDPOINTS + " endpoints");
      }
      for (Node item : items) {
        String v = scalar(item, label, "cluster.endpoints", errors);
        if (v != null) {
          String problem = endpointProblem(v);
          if (problem != null) {
            add(errors, at(label, item, "cluster.endpoints") + ": " + problem);
          } else {
            b.endpoints.add(URI.create(v));
          }
        }
      }
    }
    b.caCertificate = path(f.get("ca-certificate"), label, base, "cluster.ca-certificate", errors);
    b.certificate = path(f.get("certificate"), label, base, "cluster.certificate", errors);
    b.key = path(f.get("key"), label, base, "cluster.key", errors);
    b.keyPassphraseFile =
        path(f.get("key-passphrase-file"), label, base, "cluster.key-passphrase-file", errors);
    Node p = f.get("prefix");
    if (p != null) {
      String v = scalar(p, label, "cluster.prefix", errors);
      if (v != null) {
        if (!PREFIX.matcher(v).matches()) {
          add(
              errors,
              at(label, p, "cluster.prefix")
                  + ": must look like /srdma/prod (1 to 8 segments of letters, digits, _ . -;"
                  + " no trailing slash), got '"
                  + v
                  + "'");
        } else {
          b.prefix = v;
        }
      }
    }
    Node h = f.get("host");
    if (h != null) {
      String v = scalar(h, label, "cluster.host", errors);
      if (v != null) {
        if (!NAME.matcher(v).matches()) {
          add(
              errors,
              at(label, h, "cluster.host")
                  + ": must be a lower-case name of letters, digits, _ . - (1 to 63), got '"
                  + v
                  + "'");
        } else {
          b.host = v;
        }
      }
    }
    Node sn = f.get("server-name");
    if (sn != null) {
      b.serverName = scalar(sn, label, "cluster.server-name", errors);
    }
    Node rt = f.get("request-timeout");
    if (rt != null) {
      String v = scalar(rt, label, "cluster.request-timeout", errors);
      if (v != null) {
        Duration d = Units.parseDuration(v);
        if (d == null) {
          add(
              errors,
              at(label, rt, "cluster.request-timeout")
                  + ": must be a positive duration such as 500ms or 2s, got '"
                  + v
                  + "'");
        } else if (d.compareTo(Duration.ofMillis(100)) < 0
            || d.compareTo(Duration.ofMinutes(1)) > 0) {
          add(
              errors,
              at(label, rt, "cluster.request-timeout")
                  + ": must be between 100ms and 1m, got "
                  + v);
        } else {
          b.requestTimeout = d;
        }
      }
    }
    Node wc = f.get("watch-check-period");
    if (wc != null) {
      String v = scalar(wc, label, "cluster.watch-check-period", errors);
      if (v != null) {
        Duration d = Units.parseDuration(v);
        if (d == null) {
          add(
              errors,
              at(label, wc, "cluster.watch-check-period")
                  + ": must be a positive duration such as 500ms or 2s, got '"
                  + v
                  + "'");
        } else if (d.compareTo(MIN_WATCH_CHECK_PERIOD) < 0
            || d.compareTo(MAX_WATCH_CHECK_PERIOD) > 0) {
          add(
              errors,
              at(label, wc, "cluster.watch-check-period")
                  + ": must be between 100ms and 1m, got "
                  + v);
        } else {
          b.watchCheckPeriod = d;
        }
      }
    }
    if (errors.size() > before) {
      return null;
    }
    return b.build();
  }

  static String endpointProblem(String v) {
    URI u;
    try {
      u = new URI(v);
    } catch (URISyntaxException ex) {
      return "not a URL: '" + v + "'";
    }
    if (!"https".equals(u.getScheme())) {
      return "must be an https URL (etcd is reached over mutual TLS only), got '" + v + "'";
    }
    if (u.getHost() == null || u.getPort() <= 0) {
      return "must name a host and a port, e.g. https://10.0.0.1:2379, got '" + v + "'";
    }
    if ((u.getPath() != null && !u.getPath().isEmpty() && !u.getPath().equals("/"))
        || u.getQuery() != null
        || u.getUserInfo() != null) {
      return "must be only scheme, host and port, got '" + v + "'";
    }
    return null;
  }

  private static String scalar(Node n, String label, String key, List<String> errors) {
    if (!(n instanceof ScalarNode s) || s.getValue().isEmpty()) {
      add(errors, at(label, n, key) + ": must be a non-empty value");
      return null;
    }
    return s.getValue();
  }

  private static Path path(Node n, String label, Path base, String key, List<String> errors) {
    if (n == null) {
      return null;
    }
    String v = scalar(n, label, key, errors);
    if (v == null) {
      return null;
    }
    Path p = Path.of(v);
    return base == null || p.isAbsolute() ? p : base.resolve(p);
  }

  private static String at(String label, Node n, String key) {
    return n.getStartMark()
        .map(mk -> label + ":" + (mk.getLine() + 1) + ":" + (mk.getColumn() + 1) + ": " + key)
        .orElse(label + ": " + key);
  }

  // Values, keys and the file name are echoed in errors, which are joined by line feeds and reach
  // terminals and logs: each is escaped (Printable), so a value cannot forge or split a line, and
  // clipped, so a hostile megabyte value does not become a megabyte line.
  private static void add(List<String> errors, String text) {
    errors.add(printable(text));
  }

  private static String printable(String text) {
    String clipped =
        text.length() > MAX_ERROR_CHARS ? text.substring(0, MAX_ERROR_CHARS) + "..." : text;
    return Printable.escape(clipped);
  }

  private static ClusterException bad(List<String> errors) {
    return new ClusterException(
        ClusterException.Reason.BAD_CONFIG,
        String.join("\n", errors.stream().map(Printable::escape).toList()));
  }

  /** Every error of a refused configuration ({@code BAD_CONFIG}), one per element. */
  public static List<String> errors(ClusterException e) {
    return List.of(e.getMessage().split("\n"));
  }

  @Override
  public String toString() {
    return "ClusterConfig[" + endpoints + " prefix " + prefix + "]";
  }

  /** Fluent construction, checked by {@link #build()}. */
  public static final class Builder {
    private final List<URI> endpoints = new ArrayList<>();
    private Path caCertificate;
    private Path certificate;
    private Path key;
    private Path keyPassphraseFile;
    private String prefix;
    private String host;
    private String serverName;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private Duration watchCheckPeriod = DEFAULT_WATCH_CHECK_PERIOD;

    private Builder() {}

    /** etcd's client URLs. */
    public Builder endpoints(List<URI> uris) {
      endpoints.clear();
      endpoints.addAll(uris);
      return this;
    }

    /** The CA of etcd's server certificates. */
    public Builder caCertificate(Path p) {
      caCertificate = p;
      return this;
    }

    /** The client certificate. */
    public Builder certificate(Path p) {
      certificate = p;
      return this;
    }

    /** Its private key. */
    public Builder key(Path p) {
      key = p;
      return this;
    }

    /** The key's passphrase file, or null. */
    public Builder keyPassphraseFile(Path p) {
      keyPassphraseFile = p;
      return this;
    }

    /** The deployment's prefix. */
    public Builder prefix(String p) {
      prefix = p;
      return this;
    }

    /** The host's name. */
    public Builder host(String h) {
      host = h;
      return this;
    }

    /** The TLS name every member's certificate carries. */
    public Builder serverName(String s) {
      serverName = s;
      return this;
    }

    /** The deadline of one request. */
    public Builder requestTimeout(Duration d) {
      requestTimeout = Objects.requireNonNull(d);
      return this;
    }

    /** How often each watch is asked for progress, 100ms to 1m. */
    public Builder watchCheckPeriod(Duration d) {
      watchCheckPeriod = Objects.requireNonNull(d);
      return this;
    }

    /** Checks and builds. */
    public ClusterConfig build() {
      if (endpoints.isEmpty()) {
        throw new ClusterException(ClusterException.Reason.BAD_CONFIG, "no endpoints");
      }
      for (URI u : endpoints) {
        String problem = endpointProblem(u.toString());
        if (problem != null) {
          throw new ClusterException(ClusterException.Reason.BAD_CONFIG, printable(problem));
        }
      }
      Objects.requireNonNull(caCertificate, "caCertificate");
      Objects.requireNonNull(certificate, "certificate");
      Objects.requireNonNull(key, "key");
      if (prefix == null || !PREFIX.matcher(prefix).matches()) {
        throw new ClusterException(
            ClusterException.Reason.BAD_CONFIG, printable("bad prefix " + prefix));
      }
      if (host != null && !NAME.matcher(host).matches()) {
        throw new ClusterException(
            ClusterException.Reason.BAD_CONFIG, printable("bad host name " + host));
      }
      if (watchCheckPeriod.compareTo(MIN_WATCH_CHECK_PERIOD) < 0
          || watchCheckPeriod.compareTo(MAX_WATCH_CHECK_PERIOD) > 0) {
        throw new ClusterException(
            ClusterException.Reason.BAD_CONFIG,
            "watch check period must be between 100ms and 1m, got " + watchCheckPeriod);
      }
      return new ClusterConfig(this);
    }
  }
}
