package io.srdma.server;

import io.srdma.policy.Printable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * The configuration file of {@code srdma serve} (docs/serve.md), read and checked as a whole: every
 * error is collected as {@code file:line:column: key: what is wrong} and reported together. This
 * class only checks the file's own shape and values; {@link SecureRdmaServer#prepare} then checks
 * what the values point to (certificates, policy, regions) before anything starts.
 *
 * <p>The reading is split by job: {@link ConfigReader} loads the file and reads typed values,
 * {@link ServeSections} holds the settings and reads the larger sections, this class reads the
 * root.
 *
 * <p>Thread safety: read once by one thread; after {@link #read} returns nothing changes it, so it
 * may then be shared.
 */
public final class ServeConfig extends ServeSections {
  /** The format version this build reads. */
  static final int VERSION = 1;

  /** Largest configuration file read. */
  static final long MAX_FILE_BYTES = 1 << 20;

  /** Most YAML nodes in a configuration file: some 2,800 regions. */
  static final int MAX_NODES = 20_000;

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
  private static final List<String> POLICY_KEYS = List.of("file", "watch");
  private static final List<String> AUDIT_KEYS = List.of("file", "rotate-size");

  /** Where a value was written, for errors found after reading (files it names, regions). */
  record At(String key, int line, int column) {}

  /** One region to register at start. */
  record RegionSpec(String tenant, String region, long size, At at) {}

  /**
   * A configuration file with errors: every error, one per line, in file order. Each error is
   * escaped with {@link Printable#escape}, as errors echo values, paths and exception messages: no
   * error holds a line feed, carriage return, tab or other character that does not print as itself.
   */
  public static final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;
    private final List<String> errors;

    /**
     * An exception listing {@code errors}.
     *
     * @param errors each error, {@code file:line:column: key: what is wrong}; escaped here
     */
    public ConfigException(List<String> errors) {
      super(errors.size() + " error(s): " + String.join("; ", escaped(errors)));
      this.errors = escaped(errors);
    }

    private static List<String> escaped(List<String> errors) {
      return errors.stream().map(Printable::escape).toList();
    }

    /** Every error, one per element, escaped. */
    public List<String> errors() {
      return errors;
    }
  }

  private ServeConfig(Path file) {
    super(file);
  }

  /**
   * Reads and checks a configuration file.
   *
   * @throws ConfigException listing every error
   */
  public static ServeConfig read(Path file) throws ConfigException {
    ServeConfig c = new ServeConfig(file);
    String text = c.load();
    if (text != null) {
      Node root = c.compose(text);
      if (root != null) {
        c.readRoot(root);
      }
    }
    List<String> errors = c.errorsInFileOrder();
    if (!errors.isEmpty()) {
      throw new ConfigException(errors);
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
      aead =
          choice(
              aeadEntry,
              "aead",
              List.of("auto", "jdk", "accp", "openssl", "gcrypt", "ipsec-mb"),
              aead);
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

  // ------------------------------------------------------------------ what the command prints

  /** The configuration file as read. */
  public Path file() {
    return file;
  }

  /** The audit log; {@code srdma serve} writes its log file beside it. */
  public Path auditFile() {
    return auditFile;
  }

  /** The policy file (with a cluster, the start-up policy). */
  public Path policyFile() {
    return policyFile;
  }

  /** Whether the policy file is watched and reloaded when it changes. */
  public boolean watchPolicy() {
    return watchPolicy;
  }

  /** The RDMA provider: soft, ibv or auto. */
  public String provider() {
    return provider;
  }

  /**
   * The data path's AEAD as configured (auto, jdk, accp, openssl, gcrypt, ipsec-mb), or null when
   * not set.
   */
  public String aead() {
    return aead;
  }

  /** How many regions are registered at start. */
  public int regionCount() {
    return regions.size();
  }

  /** How long a stop may take before the process exits anyway. */
  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** Whether the admin console runs with the host (a {@code console:} section). */
  public boolean console() {
    return console;
  }

  /** The console's certificate chain, or null without a console. */
  public Path consoleCertificateChain() {
    return consoleCertificateChain;
  }

  /** The console's metrics token file, or null (then /metrics needs a login). */
  public Path consoleMetricsTokenFile() {
    return consoleMetricsTokenFile;
  }
}
