package io.srdma.server;

import io.srdma.verbs.CpuSet;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * The settings of {@link ServeConfig} with their defaults, and the readers of its larger sections
 * ({@code device}, {@code tls}, {@code regions}, {@code limits}, {@code console}, {@code cluster}).
 * {@link ServeConfig} reads the root and the small sections and calls these.
 */
abstract class ServeSections extends ConfigReader {
  private static final List<String> DEVICE_KEYS =
      List.of(
          "bind-address",
          "bind-port",
          "ibv-port",
          "gid-index",
          "responder-cpus",
          "allowed-responder-addresses",
          "trust-hello-address");
  private static final List<String> TLS_KEYS =
      List.of("certificate", "key", "key-passphrase-file", "ca-certificate", "crl");
  private static final List<String> REGION_KEYS = List.of("tenant", "region", "size");
  private static final List<String> CONSOLE_KEYS =
      List.of(
          "listen",
          "certificate-chain",
          "key",
          "key-passphrase-file",
          "metrics-token-file",
          "session-timeout",
          "session-lifetime",
          "login-attempts",
          "login-window",
          "request-read-timeout",
          "response-write-timeout",
          "export-max-duration");
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
          "control-threads",
          "worker-threads",
          "opener-threads",
          "opener-cpus",
          "opener-progress",
          "connect-threads",
          "max-connects-per-tenant",
          "shutdown-timeout");

  InetSocketAddress listen;
  String provider = "soft";
  String aead; // null: the srdma.aead property, SRDMA_AEAD, else auto
  String scoping = "auto";
  String bindAddress = "127.0.0.1";
  int bindPort;
  int ibvPort = 1;
  int gidIndex = 1;
  CpuSet responderCpus; // null: unpinned
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
  final List<ServeConfig.RegionSpec> regions = new ArrayList<>();
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
  // null: the host's defaults (HostOptions)
  Integer controlThreads;
  Integer workerThreads;
  Integer openerThreads;
  CpuSet openerCpus; // null: unpinned
  String openerProgress = "poller"; // poller | device (HostOptions.openerProgress)
  int connectThreads = io.srdma.host.HostOptions.DEFAULT_CONNECT_THREADS;
  int maxConnectsPerTenant = io.srdma.host.HostOptions.DEFAULT_MAX_CONNECTS_PER_TENANT;
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
  Duration consoleSessionLifetime = io.srdma.console.ConsoleConfig.SESSION_LIFETIME_DEFAULT;
  int consoleLoginAttempts = 5;
  Duration consoleLoginWindow = Duration.ofMinutes(5);
  Duration consoleRequestReadTimeout = io.srdma.console.ConsoleConfig.REQUEST_READ_TIMEOUT_DEFAULT;
  Duration consoleResponseWriteTimeout =
      io.srdma.console.ConsoleConfig.RESPONSE_WRITE_TIMEOUT_DEFAULT;
  Duration consoleExportMaxDuration = io.srdma.console.ConsoleConfig.EXPORT_MAX_DURATION_DEFAULT;

  /** The {@code policy.watch} entry as written, or null: a cluster section refuses it. */
  Entry watchPolicyWritten;

  ServeSections(Path file) {
    super(file);
  }

  // The cluster module reads its own section (its errors already say file:line:column: key);
  // with a cluster the policy comes from etcd, so the file is only the start-up policy.
  final void readCluster(Entry cl) {
    List<String> clusterErrors = new ArrayList<>();
    cluster =
        io.srdma.cluster.ClusterConfig.parse(
            cl.value(), label, file.toAbsolutePath().getParent(), clusterErrors);
    Mark m = cl.value().getStartMark().orElse(null);
    for (String e : clusterErrors) {
      addError(m == null ? 0 : m.getLine() + 1, m == null ? 0 : m.getColumn() + 1, e);
    }
    if (watchPolicyWritten != null && watchPolicy) {
      error(
          watchPolicyWritten.value(),
          "policy.watch",
          "cannot be true with a cluster section: the policy comes from etcd (srdma policy push)");
    }
    watchPolicy = false;
  }

  final void readConsole(Node node) {
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
    consoleSessionLifetime =
        durationOr(f.get("session-lifetime"), "console.session-lifetime", consoleSessionLifetime);
    consoleLoginAttempts =
        intOr(f.get("login-attempts"), "console.login-attempts", 1, 1_000, consoleLoginAttempts);
    consoleLoginWindow =
        durationOr(f.get("login-window"), "console.login-window", consoleLoginWindow);
    consoleRequestReadTimeout =
        consoleTimeout(
            f.get("request-read-timeout"),
            "console.request-read-timeout",
            consoleRequestReadTimeout,
            io.srdma.console.ConsoleConfig.REQUEST_READ_TIMEOUT_MAX);
    consoleResponseWriteTimeout =
        consoleTimeout(
            f.get("response-write-timeout"),
            "console.response-write-timeout",
            consoleResponseWriteTimeout,
            io.srdma.console.ConsoleConfig.RESPONSE_WRITE_TIMEOUT_MAX);
    consoleExportMaxDuration =
        consoleDuration(
            f.get("export-max-duration"),
            "console.export-max-duration",
            consoleExportMaxDuration,
            io.srdma.console.ConsoleConfig.EXPORT_MAX_DURATION_MIN,
            io.srdma.console.ConsoleConfig.EXPORT_MAX_DURATION_MAX,
            "1s to 1d");
  }

  /** A console deadline from 100ms to {@code max} (1h), or {@code current} (with an error). */
  private Duration consoleTimeout(Entry e, String key, Duration current, Duration max) {
    return consoleDuration(e, key, current, Duration.ofMillis(100), max, "100ms to 1h");
  }

  /** A console duration from {@code min} to {@code max}, or {@code current} (with an error). */
  private Duration consoleDuration(
      Entry e, String key, Duration current, Duration min, Duration max, String range) {
    Duration d = durationOr(e, key, current);
    if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
      error(
          e.value(),
          key,
          "must be from " + range + ", got '" + ((ScalarNode) e.value()).getValue().trim() + "'");
      return current;
    }
    return d;
  }

  final void readDevice(Node node) {
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
    responderCpus = cpusOr(f.get("responder-cpus"), "device.responder-cpus", responderCpus);
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

  final void readTls(Node node) {
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

  final void readRegions(Node node) {
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
        ServeConfig.At at = at(m, k);
        for (ServeConfig.RegionSpec other : regions) {
          if (other.tenant().equals(tenant) && other.region().equals(region)) {
            error(
                item,
                k,
                tenant + "/" + region + " is listed twice (also " + other.at().key() + ")");
          }
        }
        regions.add(new ServeConfig.RegionSpec(tenant, region, size, at));
      }
    }
  }

  final void readLimits(Node node) {
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
    int maxThreads = io.srdma.host.HostOptions.MAX_CONTROL_THREADS;
    if (f.get("control-threads") != null) {
      controlThreads = intOr(f.get("control-threads"), "limits.control-threads", 1, maxThreads, 2);
    }
    if (f.get("worker-threads") != null) {
      workerThreads = intOr(f.get("worker-threads"), "limits.worker-threads", 1, maxThreads, 8);
    }
    if (f.get("opener-threads") != null) {
      openerThreads =
          intOr(
              f.get("opener-threads"),
              "limits.opener-threads",
              1,
              io.srdma.host.HostOptions.MAX_OPENER_THREADS,
              1);
    }
    openerCpus = cpusOr(f.get("opener-cpus"), "limits.opener-cpus", openerCpus);
    if (f.get("opener-progress") != null) {
      openerProgress =
          choice(
              f.get("opener-progress"),
              "limits.opener-progress",
              java.util.List.of("poller", "device"),
              openerProgress);
    }
    readConnects(f.get("connect-threads"), f.get("max-connects-per-tenant"));
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

  // The queue-pair connectors (HostOptions#connectThreads): set together or not at all, so a file
  // with either value wrong leaves both at the host's defaults and is refused as a whole.
  private void readConnects(Entry threadsEntry, Entry perTenantEntry) {
    int max = io.srdma.host.HostOptions.MAX_CONTROL_THREADS;
    Long threads =
        threadsEntry == null
            ? Long.valueOf(connectThreads)
            : integer(threadsEntry, "limits.connect-threads", 1, max);
    Long perTenant =
        perTenantEntry == null
            ? Long.valueOf(maxConnectsPerTenant)
            : integer(perTenantEntry, "limits.max-connects-per-tenant", 1, max);
    if (threads == null || perTenant == null) {
      return;
    }
    if (perTenant > threads) {
      if (perTenantEntry != null) {
        error(
            perTenantEntry.value(),
            "limits.max-connects-per-tenant",
            "must not exceed limits.connect-threads ("
                + threads
                + (threadsEntry == null ? ", the default" : "")
                + "), got "
                + perTenant);
      } else {
        error(
            threadsEntry.value(),
            "limits.connect-threads",
            "must be at least limits.max-connects-per-tenant ("
                + perTenant
                + ", the default; lower it too), got "
                + threads);
      }
      return;
    }
    connectThreads = (int) (long) threads;
    maxConnectsPerTenant = (int) (long) perTenant;
  }

  /** A CPU list ({@code 1}, {@code "0-3,6"}), or {@code fallback} when the key is absent. */
  final CpuSet cpusOr(Entry e, String key, CpuSet fallback) {
    if (e == null) {
      return fallback;
    }
    String v = scalar(e, key);
    if (v == null) {
      return fallback;
    }
    try {
      return CpuSet.parse(v);
    } catch (IllegalArgumentException x) {
      error(e.value(), key, x.getMessage());
      return fallback;
    }
  }
}
