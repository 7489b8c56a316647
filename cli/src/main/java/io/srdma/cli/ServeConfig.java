package io.srdma.cli;

import io.srdma.policy.BoundedYaml;
import io.srdma.policy.Units;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * The configuration file of {@code srdma serve} (docs/serve.md), read and checked as a whole: every
 * error is collected as {@code file:line:column: key: what is wrong} and reported together. This
 * class only checks the file's own shape and values; {@link ServeCommand} then checks what the
 * values point to (certificates, policy, regions) before anything starts.
 */
final class ServeConfig {
  /** The format version this build reads. */
  static final int VERSION = 1;

  /** Largest configuration file read. */
  static final long MAX_FILE_BYTES = 1 << 20;

  /** Most YAML nodes in a configuration file: some 2,800 regions. */
  static final int MAX_NODES = 20_000;

  private static final int MAX_MESSAGE_CHARS = 300;
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  private static final Pattern INTEGER = Pattern.compile("[0-9]{1,10}");

  private static final List<String> ROOT_KEYS =
      List.of(
          "version",
          "listen",
          "provider",
          "aead",
          "scoping",
          "device",
          "tls",
          "policy",
          "audit",
          "regions",
          "limits",
          "record-size",
          "console",
          "cluster");
  private static final List<String> DEVICE_KEYS =
      List.of(
          "bind-address",
          "bind-port",
          "ibv-port",
          "gid-index",
          "allowed-responder-addresses",
          "trust-hello-address");
  private static final List<String> TLS_KEYS =
      List.of("certificate", "key", "key-passphrase-file", "ca-certificate", "crl");
  private static final List<String> POLICY_KEYS = List.of("file", "watch");
  private static final List<String> AUDIT_KEYS = List.of("file", "rotate-size");
  private static final List<String> REGION_KEYS = List.of("tenant", "region", "size");
  private static final List<String> CONSOLE_KEYS =
      List.of(
          "listen",
          "certificate-chain",
          "key",
          "key-passphrase-file",
          "metrics-token-file",
          "session-timeout",
          "login-attempts",
          "login-window");
  private static final List<String> LIMIT_KEYS =
      List.of(
          "max-sessions",
          "max-sessions-per-tenant",
          "max-pending-handshakes",
          "max-pending-handshakes-per-address",
          "first-record-timeout",
          "max-rejected-records",
          "region-key-rotation",
          "auth-failures-per-minute",
          "handshake-timeout",
          "request-timeout",
          "idle-timeout",
          "max-session-lifetime",
          "receive-depth",
          "shutdown-timeout");

  /** Where a value was written, for errors found after reading (files it names, regions). */
  record At(String key, int line, int column) {}

  /** One region to register at start. */
  record RegionSpec(String tenant, String region, long size, At at) {}

  /** A configuration file with errors: every error, one per line, in file order. */
  static final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;
    private final List<String> errors;

    ConfigException(List<String> errors) {
      super(errors.size() + " error(s): " + String.join("; ", errors));
      this.errors = List.copyOf(errors);
    }

    List<String> errors() {
      return errors;
    }
  }

  final Path file;
  final String label;
  InetSocketAddress listen;
  String provider = "soft";
  String aead; // null: the srdma.aead property, SRDMA_AEAD, else auto
  String scoping = "auto";
  String bindAddress = "127.0.0.1";
  int bindPort;
  int ibvPort = 1;
  int gidIndex = 1;
  Path certificate;
  Path key;
  Path keyPassphraseFile;
  Path caCertificate;
  Path crl;
  Path policyFile;
  // the optional cluster: section (docs/cluster.md); null: a single host, as before
  io.srdma.cluster.ClusterConfig cluster;
  boolean watchPolicy = true;
  Path auditFile;
  long auditRotateBytes = 64L << 20;
  final List<RegionSpec> regions = new ArrayList<>();
  int maxSessions = 1024;
  int maxSessionsPerTenant = 64;
  int maxPendingHandshakes = 32;
  int maxPendingHandshakesPerAddress = 4;
  Duration firstRecordTimeout = Duration.ofSeconds(2);
  int maxRejectedRecords = 64;
  Duration regionKeyRotation = Duration.ofMinutes(10);
  final Set<InetAddress> allowedResponderAddresses = new LinkedHashSet<>();
  boolean trustHelloAddress;
  int authFailuresPerMinute = 20;
  Duration handshakeTimeout = Duration.ofSeconds(5);
  Duration requestTimeout = Duration.ofSeconds(5);
  Duration idleTimeout = Duration.ofSeconds(60);
  Duration maxSessionLifetime; // null: sessions live as long as their certificate
  int receiveDepth = 256;
  Duration shutdownTimeout = Duration.ofSeconds(20);
  int recordSize = 64 * 1024;

  /** Whether the file has a {@code console:} section: the admin console runs with the host. */
  boolean console;

  InetSocketAddress consoleListen;
  Path consoleCertificateChain;
  Path consoleKey;
  Path consoleKeyPassphraseFile;
  Path consoleMetricsTokenFile;
  Duration consoleSessionTimeout = Duration.ofMinutes(30);
  int consoleLoginAttempts = 5;
  Duration consoleLoginWindow = Duration.ofMinutes(5);
  final Map<String, At> positions = new LinkedHashMap<>();

  private final Path base;
  private final List<Located> errors = new ArrayList<>();

  private record Located(int line, int column, String text) {}

  private record Entry(String key, Node keyNode, Node value) {}

  private ServeConfig(Path file) {
    this.file = file;
    this.label = file.toString();
    Path parent = file.toAbsolutePath().getParent();
    this.base = parent == null ? Path.of("") : parent;
  }

  /**
   * Reads and checks a configuration file.
   *
   * @throws ConfigException listing every error
   */
  static ServeConfig read(Path file) throws ConfigException {
    ServeConfig c = new ServeConfig(file);
    String text = c.load();
    if (text != null) {
      Node root = c.compose(text);
      if (root != null) {
        c.readRoot(root);
      }
    }
    if (!c.errors.isEmpty()) {
      c.errors.sort(
          (a, b) -> a.line != b.line ? Integer.compare(a.line, b.line) : a.column - b.column);
      List<String> out = new ArrayList<>();
      for (Located e : c.errors) {
        out.add(e.text);
      }
      throw new ConfigException(out);
    }
    return c;
  }

  /** The position of a key as {@code file:line:column: key}, for errors found later. */
  String where(String key) {
    At at = positions.get(key);
    return at == null ? label + ": " + key : where(at);
  }

  String where(At at) {
    return label + ":" + at.line() + ":" + at.column() + ": " + at.key();
  }

  // ------------------------------------------------------------------ reading

  private String load() {
    byte[] raw;
    try {
      if (!Files.isRegularFile(file)) {
        fileError("no such file (or not a regular file)");
        return null;
      }
      if (Files.size(file) > MAX_FILE_BYTES) {
        fileError("larger than " + MAX_FILE_BYTES + " bytes; not a configuration file");
        return null;
      }
      raw = Files.readAllBytes(file);
    } catch (IOException e) {
      fileError("cannot read: " + Addresses.explain(e));
      return null;
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(raw))
          .toString();
    } catch (CharacterCodingException e) {
      fileError("not valid UTF-8");
      return null;
    }
  }

  // BoundedYaml refuses anchors, aliases, explicit tags, nesting and node counts beyond its
  // limits and bad characters before any node is built: hostile text gets one clear error.
  private Node compose(String text) {
    try {
      Node root = BoundedYaml.compose(label, text, (int) MAX_FILE_BYTES, MAX_NODES);
      if (root == null) {
        fileError("the file is empty");
      }
      return root;
    } catch (BoundedYaml.RejectedException e) {
      for (BoundedYaml.Problem p : e.problems()) {
        String reason = p.reason();
        if (reason.startsWith("anchors") || reason.startsWith("aliases")) {
          reason += " in a serve configuration";
        }
        errors.add(
            new Located(
                p.line(), p.column(), label + ":" + p.line() + ":" + p.column() + ": " + reason));
      }
      return null;
    }
  }

  private void readRoot(Node root) {
    Map<String, Entry> f =
        fields(root, "", ROOT_KEYS, List.of("version", "listen", "tls", "policy", "audit"));
    if (f == null) {
      return;
    }
    Entry v = f.get("version");
    if (v != null) {
      Long n = integer(v, "version", 0, Integer.MAX_VALUE);
      if (n != null && n != VERSION) {
        error(v.value(), "version", "unsupported version " + n + " (this build reads 1)");
      }
    }
    Entry listenEntry = f.get("listen");
    if (listenEntry != null) {
      listen = address(listenEntry, "listen");
    }
    Entry p = f.get("provider");
    if (p != null) {
      provider = choice(p, "provider", List.of("soft", "ibv", "auto"), provider);
    }
    Entry aeadEntry = f.get("aead");
    if (aeadEntry != null) {
      aead = choice(aeadEntry, "aead", List.of("auto", "jdk", "accp"), aead);
    }
    Entry s = f.get("scoping");
    if (s != null) {
      scoping = choice(s, "scoping", List.of("auto", "window", "region"), scoping);
    }
    Entry d = f.get("device");
    if (d != null) {
      readDevice(d.value());
    }
    Entry t = f.get("tls");
    if (t != null) {
      readTls(t.value());
    }
    Entry pol = f.get("policy");
    if (pol != null) {
      Map<String, Entry> pf = fields(pol.value(), "policy", POLICY_KEYS, List.of("file"));
      if (pf != null) {
        policyFile = path(pf.get("file"), "policy.file", policyFile);
        Entry w = pf.get("watch");
        if (w != null) {
          watchPolicy = bool(w, "policy.watch", watchPolicy);
        }
        watchPolicyWritten = w;
      }
    }
    Entry a = f.get("audit");
    if (a != null) {
      Map<String, Entry> af = fields(a.value(), "audit", AUDIT_KEYS, List.of("file"));
      if (af != null) {
        auditFile = path(af.get("file"), "audit.file", auditFile);
        Entry r = af.get("rotate-size");
        if (r != null) {
          Long n = size(r, "audit.rotate-size", 4096, 1L << 40);
          auditRotateBytes = n == null ? auditRotateBytes : n;
        }
      }
    }
    Entry regs = f.get("regions");
    if (regs != null) {
      readRegions(regs.value());
    }
    Entry l = f.get("limits");
    if (l != null) {
      readLimits(l.value());
    }
    Entry rs = f.get("record-size");
    if (rs != null) {
      Long n = size(rs, "record-size", 1, 1 << 24);
      recordSize = n == null ? recordSize : (int) (long) n;
    }
    Entry con = f.get("console");
    if (con != null) {
      readConsole(con.value());
    }
    Entry cl = f.get("cluster");
    if (cl != null) {
      readCluster(cl);
    }
  }

  private Entry watchPolicyWritten;

  // The cluster module reads its own section (its errors already say file:line:column: key);
  // with a cluster the policy comes from etcd, so the file is only the start-up policy.
  private void readCluster(Entry cl) {
    List<String> clusterErrors = new ArrayList<>();
    cluster =
        io.srdma.cluster.ClusterConfig.parse(
            cl.value(), label, file.toAbsolutePath().getParent(), clusterErrors);
    Mark m = cl.value().getStartMark().orElse(null);
    for (String e : clusterErrors) {
      errors.add(
          new Located(m == null ? 0 : m.getLine() + 1, m == null ? 0 : m.getColumn() + 1, e));
    }
    if (watchPolicyWritten != null && watchPolicy) {
      error(
          watchPolicyWritten.value(),
          "policy.watch",
          "cannot be true with a cluster section: the policy comes from etcd (srdma policy push)");
    }
    watchPolicy = false;
  }

  private void readConsole(Node node) {
    console = true;
    Map<String, Entry> f =
        fields(node, "console", CONSOLE_KEYS, List.of("listen", "certificate-chain", "key"));
    if (f == null) {
      return;
    }
    Entry l = f.get("listen");
    if (l != null) {
      consoleListen = address(l, "console.listen");
    }
    consoleCertificateChain = path(f.get("certificate-chain"), "console.certificate-chain", null);
    consoleKey = path(f.get("key"), "console.key", null);
    consoleKeyPassphraseFile =
        path(f.get("key-passphrase-file"), "console.key-passphrase-file", null);
    consoleMetricsTokenFile = path(f.get("metrics-token-file"), "console.metrics-token-file", null);
    consoleSessionTimeout =
        durationOr(f.get("session-timeout"), "console.session-timeout", consoleSessionTimeout);
    consoleLoginAttempts =
        intOr(f.get("login-attempts"), "console.login-attempts", 1, 1_000, consoleLoginAttempts);
    consoleLoginWindow =
        durationOr(f.get("login-window"), "console.login-window", consoleLoginWindow);
  }

  private void readDevice(Node node) {
    Map<String, Entry> f = fields(node, "device", DEVICE_KEYS, List.of());
    if (f == null) {
      return;
    }
    Entry b = f.get("bind-address");
    if (b != null) {
      String host = scalar(b, "device.bind-address");
      if (host != null) {
        InetAddress a = resolve(host);
        if (a == null) {
          error(b.value(), "device.bind-address", "'" + host + "' does not resolve");
        } else if (a.isAnyLocalAddress()) {
          error(
              b.value(),
              "device.bind-address",
              "must be an address clients can reach (it is sent to them), not the wildcard '"
                  + host
                  + "'");
        } else {
          bindAddress = host;
        }
      }
    }
    bindPort = intOr(f.get("bind-port"), "device.bind-port", 0, 65535, bindPort);
    ibvPort = intOr(f.get("ibv-port"), "device.ibv-port", 1, 255, ibvPort);
    gidIndex = intOr(f.get("gid-index"), "device.gid-index", 0, 65535, gidIndex);
    if (f.containsKey("trust-hello-address")) {
      trustHelloAddress =
          bool(f.get("trust-hello-address"), "device.trust-hello-address", trustHelloAddress);
    }
    Entry allowed = f.get("allowed-responder-addresses");
    if (allowed != null) {
      String key = "device.allowed-responder-addresses";
      if (!(allowed.value() instanceof SequenceNode seq)) {
        error(allowed.value(), key, "must be a list of IP addresses, got " + kind(allowed.value()));
      } else {
        for (Node item : seq.getValue()) {
          String ip = item instanceof ScalarNode sn && sn.isPlain() ? sn.getValue().trim() : null;
          InetAddress a = ip == null ? null : literalAddress(ip);
          if (a == null) {
            error(
                item,
                key,
                "each entry must be an IP address (no host names), got "
                    + (ip == null ? kind(item) : "'" + ip + "'"));
          } else {
            allowedResponderAddresses.add(a);
          }
        }
      }
    }
  }

  /** An IPv4 or IPv6 literal, never a name lookup; null when {@code text} is not one. */
  private static InetAddress literalAddress(String text) {
    boolean v4 = text.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    boolean v6 = text.indexOf(':') >= 0 && text.matches("[0-9A-Fa-f:.]+");
    if (!v4 && !v6) {
      return null;
    }
    try {
      return InetAddress.getByName(text);
    } catch (java.net.UnknownHostException e) {
      return null;
    }
  }

  private void readTls(Node node) {
    Map<String, Entry> f =
        fields(node, "tls", TLS_KEYS, List.of("certificate", "key", "ca-certificate", "crl"));
    if (f == null) {
      return;
    }
    certificate = path(f.get("certificate"), "tls.certificate", null);
    key = path(f.get("key"), "tls.key", null);
    keyPassphraseFile = path(f.get("key-passphrase-file"), "tls.key-passphrase-file", null);
    caCertificate = path(f.get("ca-certificate"), "tls.ca-certificate", null);
    crl = path(f.get("crl"), "tls.crl", null);
  }

  private void readRegions(Node node) {
    if (!(node instanceof SequenceNode seq)) {
      if (isEmpty(node)) {
        return;
      }
      error(node, "regions", "must be a list of {tenant, region, size}, got " + kind(node));
      return;
    }
    int i = 0;
    for (Node item : seq.getValue()) {
      String k = "regions[" + i++ + "]";
      Map<String, Entry> f = fields(item, k, REGION_KEYS, REGION_KEYS);
      if (f == null) {
        continue;
      }
      String tenant = name(f.get("tenant"), k + ".tenant");
      String region = name(f.get("region"), k + ".region");
      Long size = f.get("size") == null ? null : size(f.get("size"), k + ".size", 1, 1L << 40);
      if (tenant != null && region != null && size != null) {
        Mark m = item.getStartMark().orElse(null);
        At at = at(m, k);
        for (RegionSpec other : regions) {
          if (other.tenant().equals(tenant) && other.region().equals(region)) {
            error(
                item,
                k,
                tenant + "/" + region + " is listed twice (also " + other.at().key() + ")");
          }
        }
        regions.add(new RegionSpec(tenant, region, size, at));
      }
    }
  }

  private void readLimits(Node node) {
    Map<String, Entry> f = fields(node, "limits", LIMIT_KEYS, List.of());
    if (f == null) {
      return;
    }
    maxSessions = intOr(f.get("max-sessions"), "limits.max-sessions", 1, 1_000_000, maxSessions);
    maxSessionsPerTenant =
        intOr(
            f.get("max-sessions-per-tenant"),
            "limits.max-sessions-per-tenant",
            1,
            1_000_000,
            maxSessionsPerTenant);
    maxPendingHandshakes =
        intOr(
            f.get("max-pending-handshakes"),
            "limits.max-pending-handshakes",
            1,
            100_000,
            maxPendingHandshakes);
    maxPendingHandshakesPerAddress =
        intOr(
            f.get("max-pending-handshakes-per-address"),
            "limits.max-pending-handshakes-per-address",
            1,
            100_000,
            maxPendingHandshakesPerAddress);
    firstRecordTimeout =
        durationOr(
            f.get("first-record-timeout"), "limits.first-record-timeout", firstRecordTimeout);
    maxRejectedRecords =
        intOr(
            f.get("max-rejected-records"),
            "limits.max-rejected-records",
            1,
            1_000_000,
            maxRejectedRecords);
    regionKeyRotation =
        durationOr(f.get("region-key-rotation"), "limits.region-key-rotation", regionKeyRotation);
    if (regionKeyRotation.compareTo(Duration.ofSeconds(1)) < 0) {
      error(
          f.get("region-key-rotation").value(),
          "limits.region-key-rotation",
          "must be at least 1s, got " + regionKeyRotation);
    }
    authFailuresPerMinute =
        intOr(
            f.get("auth-failures-per-minute"),
            "limits.auth-failures-per-minute",
            1,
            1_000_000,
            authFailuresPerMinute);
    handshakeTimeout =
        durationOr(f.get("handshake-timeout"), "limits.handshake-timeout", handshakeTimeout);
    requestTimeout = durationOr(f.get("request-timeout"), "limits.request-timeout", requestTimeout);
    idleTimeout = durationOr(f.get("idle-timeout"), "limits.idle-timeout", idleTimeout);
    maxSessionLifetime =
        durationOr(
            f.get("max-session-lifetime"), "limits.max-session-lifetime", maxSessionLifetime);
    receiveDepth = intOr(f.get("receive-depth"), "limits.receive-depth", 1, 4096, receiveDepth);
    shutdownTimeout =
        durationOr(f.get("shutdown-timeout"), "limits.shutdown-timeout", shutdownTimeout);
    if (firstRecordTimeout.compareTo(handshakeTimeout) > 0) {
      error(
          (f.containsKey("first-record-timeout")
                  ? f.get("first-record-timeout")
                  : f.get("handshake-timeout"))
              .value(),
          "limits.first-record-timeout",
          "must not exceed limits.handshake-timeout ("
              + handshakeTimeout
              + "), got "
              + firstRecordTimeout);
    }
    if (maxSessionsPerTenant > maxSessions && f.containsKey("max-sessions-per-tenant")) {
      error(
          f.get("max-sessions-per-tenant").value(),
          "limits.max-sessions-per-tenant",
          "must not exceed limits.max-sessions (" + maxSessions + "), got " + maxSessionsPerTenant);
    }
  }

  // ------------------------------------------------------------------ values

  private Map<String, Entry> fields(
      Node node, String where, List<String> allowed, List<String> required) {
    String what = where.isEmpty() ? "the configuration" : where;
    if (!(node instanceof MappingNode map)) {
      error(
          node,
          where.isEmpty() ? null : where,
          (where.isEmpty() ? "the configuration " : "") + "must be a mapping, got " + kind(node));
      return null;
    }
    Map<String, Entry> out = new LinkedHashMap<>();
    for (NodeTuple t : map.getValue()) {
      Node k = t.getKeyNode();
      if (!(k instanceof ScalarNode ks)) {
        error(k, where.isEmpty() ? null : where, "keys must be plain words");
        continue;
      }
      String name = ks.getValue();
      String full = where.isEmpty() ? name : where + "." + name;
      if (!allowed.contains(name)) {
        error(
            k,
            full,
            "unknown key '"
                + name
                + "' in "
                + what
                + " (expected one of "
                + String.join(", ", allowed)
                + ")");
        continue;
      }
      if (out.containsKey(name)) {
        error(k, full, "duplicate key '" + name + "' in " + what);
        continue;
      }
      positions.put(full, at(k.getStartMark().orElse(null), full));
      out.put(name, new Entry(name, k, t.getValueNode()));
    }
    for (String r : required) {
      if (!out.containsKey(r)) {
        error(node, where.isEmpty() ? r : where + "." + r, "missing required key '" + r + "'");
      }
    }
    return out;
  }

  private String scalar(Entry e, String key) {
    if (!(e.value() instanceof ScalarNode s)) {
      error(e.value(), key, "must be a single value, got " + kind(e.value()));
      return null;
    }
    String v = s.getValue().trim();
    if (v.isEmpty() || (s.getTag().getValue().endsWith(":null") && isNullWord(v))) {
      error(e.value(), key, "has no value");
      return null;
    }
    return v;
  }

  // Numbers, sizes, durations and booleans are written plain: a quoted "8" is text, and text
  // where a number belongs is an error, as in any typed format.
  private String plain(Entry e, String key, String expected) {
    String v = scalar(e, key);
    if (v != null && !((ScalarNode) e.value()).isPlain()) {
      error(
          e.value(),
          key,
          "must be " + expected + " written without quotes, got the text '" + v + "'");
      return null;
    }
    return v;
  }

  private static boolean isNullWord(String v) {
    return v.equals("~") || v.equalsIgnoreCase("null");
  }

  private Long integer(Entry e, String key, long min, long max) {
    String v = plain(e, key, "a whole number");
    if (v == null) {
      return null;
    }
    if (!INTEGER.matcher(v).matches() || Long.parseLong(v) < min || Long.parseLong(v) > max) {
      error(e.value(), key, "must be a whole number " + min + ".." + max + ", got '" + v + "'");
      return null;
    }
    return Long.parseLong(v);
  }

  private int intOr(Entry e, String key, int min, int max, int fallback) {
    if (e == null) {
      return fallback;
    }
    Long n = integer(e, key, min, max);
    return n == null ? fallback : (int) (long) n;
  }

  private Long size(Entry e, String key, long min, long max) {
    String v = plain(e, key, "a size");
    if (v == null) {
      return null;
    }
    OptionalLong n = Units.parseSize(v);
    if (n.isEmpty()) {
      error(e.value(), key, Units.sizeProblem(v));
      return null;
    }
    if (n.getAsLong() < min || n.getAsLong() > max) {
      error(
          e.value(),
          key,
          "must be "
              + Units.formatSize(min)
              + " to "
              + Units.formatSize(max)
              + ", got "
              + Units.formatSize(n.getAsLong()));
      return null;
    }
    return n.getAsLong();
  }

  private Duration durationOr(Entry e, String key, Duration fallback) {
    if (e == null) {
      return fallback;
    }
    String v = plain(e, key, "a duration");
    if (v == null) {
      return fallback;
    }
    Duration d = Units.parseDuration(v);
    if (d == null) {
      error(
          e.value(),
          key,
          "must be a positive duration with a unit ms, s, m, h or d (e.g. 5s), got '" + v + "'");
      return fallback;
    }
    if (d.compareTo(Duration.ofDays(1)) > 0) {
      error(e.value(), key, "must be at most 1d, got '" + v + "'");
      return fallback;
    }
    return d;
  }

  private boolean bool(Entry e, String key, boolean fallback) {
    String v = plain(e, key, "true or false");
    if (v == null) {
      return fallback;
    }
    if (!v.equals("true") && !v.equals("false")) {
      error(e.value(), key, "must be true or false, got '" + v + "'");
      return fallback;
    }
    return v.equals("true");
  }

  private String choice(Entry e, String key, List<String> allowed, String fallback) {
    String v = scalar(e, key);
    if (v == null) {
      return fallback;
    }
    String lower = v.toLowerCase(Locale.ROOT);
    if (!allowed.contains(lower)) {
      error(e.value(), key, "must be one of " + String.join(", ", allowed) + ", got '" + v + "'");
      return fallback;
    }
    return lower;
  }

  private String name(Entry e, String key) {
    if (e == null) {
      return null;
    }
    String v = scalar(e, key);
    if (v != null && !NAME.matcher(v).matches()) {
      error(
          e.value(),
          key,
          "must be a name of 1-63 characters a-z, 0-9, '_', '-' starting with a letter or digit,"
              + " got '"
              + v
              + "'");
      return null;
    }
    return v;
  }

  private Path path(Entry e, String key, Path fallback) {
    if (e == null) {
      return fallback;
    }
    String v = scalar(e, key);
    if (v == null) {
      return fallback;
    }
    if (v.indexOf('\0') >= 0) {
      error(e.value(), key, "is not a usable path");
      return fallback;
    }
    try {
      Path p = Path.of(v);
      return p.isAbsolute() ? p : base.resolve(p).normalize();
    } catch (java.nio.file.InvalidPathException x) {
      error(e.value(), key, "is not a usable path: " + x.getReason());
      return fallback;
    }
  }

  private InetSocketAddress address(Entry e, String key) {
    String v = scalar(e, key);
    if (v == null) {
      return null;
    }
    String host;
    String port;
    if (v.startsWith("[")) {
      int close = v.indexOf("]:");
      if (close < 0) {
        error(e.value(), key, "must be HOST:PORT or [IPv6]:PORT, got '" + v + "'");
        return null;
      }
      host = v.substring(1, close);
      port = v.substring(close + 2);
    } else {
      int colon = v.lastIndexOf(':');
      if (colon <= 0 || v.indexOf(':') != colon) {
        error(e.value(), key, "must be HOST:PORT (e.g. 0.0.0.0:7471, [::]:7471), got '" + v + "'");
        return null;
      }
      host = v.substring(0, colon);
      port = v.substring(colon + 1);
    }
    if (!INTEGER.matcher(port).matches() || Long.parseLong(port) > 65535) {
      error(e.value(), key, "port must be 0..65535 (0: any free port), got '" + port + "'");
      return null;
    }
    InetAddress address = resolve(host);
    if (address == null) {
      error(e.value(), key, "host '" + host + "' does not resolve");
      return null;
    }
    return new InetSocketAddress(address, Integer.parseInt(port));
  }

  private static InetAddress resolve(String host) {
    if (host.isEmpty()) {
      return null;
    }
    try {
      return InetAddress.getByName(host);
    } catch (UnknownHostException | SecurityException e) {
      return null;
    }
  }

  private static boolean isEmpty(Node node) {
    return node instanceof ScalarNode s && s.getValue().isEmpty();
  }

  private static String kind(Node node) {
    if (node instanceof MappingNode) {
      return "a mapping";
    }
    if (node instanceof SequenceNode) {
      return "a list";
    }
    if (node instanceof ScalarNode s) {
      return s.getValue().isEmpty() ? "nothing" : "'" + s.getValue() + "'";
    }
    return "something else";
  }

  private static At at(Mark m, String key) {
    return m == null ? new At(key, 1, 1) : new At(key, m.getLine() + 1, m.getColumn() + 1);
  }

  private void error(Node node, String key, String message) {
    error(node == null ? null : node.getStartMark().orElse(null), key, message);
  }

  private void error(Mark m, String key, String message) {
    // values are echoed in messages; a hostile megabyte value must not become a megabyte line
    if (message.length() > MAX_MESSAGE_CHARS) {
      message = message.substring(0, MAX_MESSAGE_CHARS) + "...";
    }
    int line = m == null ? 0 : m.getLine() + 1;
    int column = m == null ? 0 : m.getColumn() + 1;
    String pos = m == null ? label : label + ":" + line + ":" + column;
    errors.add(new Located(line, column, pos + ": " + (key == null ? "" : key + ": ") + message));
  }

  private void fileError(String message) {
    errors.add(new Located(0, 0, label + ": " + message));
  }
}
