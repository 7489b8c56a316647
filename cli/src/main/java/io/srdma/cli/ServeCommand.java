package io.srdma.cli;

import io.srdma.cluster.ClusterNode;
import io.srdma.console.ConsoleConfig;
import io.srdma.console.ConsoleException;
import io.srdma.console.ConsoleServer;
import io.srdma.console.HostConsoleBackend;
import io.srdma.host.HostOptions;
import io.srdma.host.RegionHost;
import io.srdma.keys.CertificateUsage;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.HighWaterMark;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Pem;
import io.srdma.keys.RevocationList;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditLogOptions;
import io.srdma.policy.AuditSigner;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.Region;
import io.srdma.policy.ReloadResult;
import io.srdma.policy.Tenant;
import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.doctor.DeviceCounters;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code srdma serve --config FILE}: runs a {@link RegionHost} until SIGINT or SIGTERM.
 *
 * <p>Three phases, so that a bad configuration starts nothing: the file is read and checked as a
 * whole ({@link ServeConfig}); then everything it names is loaded and checked (certificates, key,
 * CA, CRL, policy, regions against the policy, provider, audit directory); only then are the audit
 * log opened, the host started, the regions registered and the policy watch started. Errors of the
 * first two phases exit 2 with every error as {@code file:line:column: key: what}; a failure to
 * start (port in use, device error) exits 1 after undoing what was started.
 *
 * <p>With a {@code console:} section the admin console ({@link ConsoleServer}) runs in the same
 * process: started after the host, over a {@link HostConsoleBackend} of it, with the console users
 * of the policy in force; closed before the host.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = {
      "Run a region host: mutual-TLS control plane, grants under the access policy, sealed"
          + " records, audit log. Runs until SIGINT/SIGTERM (see docs/serve.md).",
      "Prints one line 'srdma serve: listening on HOST:PORT ...' when ready (and, with a console"
          + " section, 'srdma serve: console on https://HOST:PORT ...')."
    },
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {
      "0:stopped cleanly (143/130 when the JVM ends on SIGTERM/SIGINT)",
      "1:could not start (port in use, device error, audit log unusable)",
      "2:bad configuration; nothing was started"
    })
final class ServeCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--config",
      required = true,
      paramLabel = "FILE",
      description = "The serve configuration (YAML, docs/serve.md).")
  Path config;

  @Option(
      names = "--aead",
      paramLabel = "MODE",
      description =
          "AES-256-GCM of the data path: auto, jdk or accp; overrides the configuration's aead"
              + " (default: aead, else the srdma.aead property, else SRDMA_AEAD, else auto).")
  String aead;

  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile Running running;
  private volatile InetSocketAddress address;

  /** What the checks produced: everything the host needs, nothing opened yet. */
  private record Prepared(
      Credential credential,
      DeploymentTrust trust,
      Policy policy,
      String policyText,
      String hostIdentity,
      ConsoleConfig console,
      RevocationList revocations,
      HighWaterMark policySerials) {}

  /** What is running; closed in reverse. */
  private static final class Running implements AutoCloseable {
    AuditLog auditLog;
    RegionHost host;
    HostConsoleBackend backend;
    PolicyWatcher watcher;
    ClusterNode cluster;
    ConsoleServer console;

    @Override
    public void close() {
      if (console != null) {
        console.close();
      }
      if (cluster != null) {
        cluster.close();
      }
      if (watcher != null) {
        watcher.close();
      }
      if (host != null) {
        host.close();
      }
      if (auditLog != null) {
        auditLog.close();
      }
    }
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ServeConfig c;
    Prepared p;
    try {
      c = ServeConfig.read(config);
      p = prepare(c);
    } catch (ServeConfig.ConfigException e) {
      for (String line : e.errors()) {
        err.println(line);
      }
      err.printf(
          "srdma serve: %d error%s in %s; nothing was started%n",
          e.errors().size(), e.errors().size() == 1 ? "" : "s", config);
      err.flush();
      return KeyCommands.EXIT_USAGE;
    }
    // log lines go to srdma.log beside the audit log (the terminal shows them with --verbose)
    try (CliLogging.LogFile logFile = CliLogging.toFile(c.auditFile.toAbsolutePath().getParent())) {
      return serve(c, p, out, err, logFile.file());
    }
  }

  private int serve(ServeConfig c, Prepared p, PrintWriter out, PrintWriter err, Path logFile) {
    Running r = new Running();
    try {
      io.srdma.channel.record.AeadSelection.select(aeadMode(c));
      start(c, p, r);
    } catch (RuntimeException e) {
      r.close();
      err.println("srdma serve: could not start: " + Addresses.explain(e));
      err.printf("srdma serve: details in %s%n", logFile);
      err.flush();
      return KeyCommands.EXIT_FAILED;
    }
    running = r;
    Thread hook = new Thread(() -> shutdown(c.shutdownTimeout), "srdma-serve-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    address = r.host.address();
    out.printf(
        "srdma serve: listening on %s (host %s, provider %s, grants scoped by %s, %d region%s,"
            + " policy %s sha256 %s%s, audit %s)%n",
        format(address),
        p.hostIdentity(),
        c.provider,
        r.host.scopedByRegion() ? "per-grant memory regions" : "type-2 memory windows",
        c.regions.size(),
        c.regions.size() == 1 ? "" : "s",
        c.policyFile,
        p.policy().sha256().substring(0, 12),
        c.watchPolicy ? ", watched" : "",
        c.auditFile);
    if (r.console != null) {
      int users = p.policy().consoleUsers().size();
      out.printf(
          "srdma serve: console on %s (%d console user%s of the policy, certificate %s, metrics"
              + " token %s)%n",
          r.console.url(),
          users,
          users == 1 ? "" : "s",
          c.consoleCertificateChain,
          c.consoleMetricsTokenFile == null ? "none: /metrics needs a login" : "set");
    }
    out.printf("srdma serve: log %s%n", logFile);
    out.flush();
    try {
      stopRequested.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    shutdown(c.shutdownTimeout);
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook is running or ran
    }
    out.println("srdma serve: stopped");
    out.flush();
    return 0;
  }

  /** Asks a running serve to stop (as SIGTERM does); {@link #call} then returns 0. */
  void stop() {
    stopRequested.countDown();
  }

  /** The control-plane address once ready, else null. */
  InetSocketAddress address() {
    return address;
  }

  /** The running host once ready, else null (tests look at its sessions and policy). */
  RegionHost regionHost() {
    Running r = running;
    return r == null ? null : r.host;
  }

  /** Waits until the host is closed (or the wait is over). */
  boolean awaitStopped(Duration d) throws InterruptedException {
    return stopped.await(d.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Closes what runs, at most {@code limit} long: the console, the watch, then the host (ending
   * every session and revoking its grants), then the audit log. Idempotent; callable from the
   * shutdown hook.
   */
  private void shutdown(Duration limit) {
    stopRequested.countDown();
    Running r;
    synchronized (this) {
      r = running;
      running = null;
    }
    if (r == null) {
      awaitQuietly(limit);
      return;
    }
    LOG.info("srdma serve: stopping");
    Thread closer =
        new Thread(
            () -> {
              try {
                r.close();
              } finally {
                stopped.countDown();
              }
            },
            "srdma-serve-close");
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(limit.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closer.isAlive()) {
      LOG.warn("srdma serve: did not stop within {}; exiting anyway", limit);
    }
  }

  private void awaitQuietly(Duration limit) {
    try {
      stopped.await(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String format(InetSocketAddress a) {
    return Addresses.format(new InetSocketAddress(a.getAddress().getHostAddress(), a.getPort()));
  }

  // ------------------------------------------------------------------ checks (nothing started)

  private static Prepared prepare(ServeConfig c) throws ServeConfig.ConfigException {
    List<String> errors = new ArrayList<>();
    // TLS material
    char[] pass = null;
    if (c.keyPassphraseFile != null) {
      try {
        pass = KeyCommands.readPassphrase(c.keyPassphraseFile);
      } catch (KeyExchangeException e) {
        errors.add(c.where("tls.key-passphrase-file") + ": " + message(e));
      }
    }
    X509Certificate cert = null;
    PrivateKey key = null;
    X509CRL crl = null;
    try {
      cert = readCertificate(c.certificate, c.where("tls.certificate"), errors);
      if (readable(c.key, c.where("tls.key"), errors)) {
        try {
          key = Pem.readPrivateKey(c.key, pass);
        } catch (KeyExchangeException e) {
          errors.add(c.where("tls.key") + ": " + c.key + ": " + message(e));
        }
      }
    } finally {
      KeyCommands.wipe(pass);
    }
    X509Certificate ca = readCertificate(c.caCertificate, c.where("tls.ca-certificate"), errors);
    if (readable(c.crl, c.where("tls.crl"), errors)) {
      try {
        crl = Pem.readCrl(c.crl);
      } catch (KeyExchangeException e) {
        errors.add(c.where("tls.crl") + ": " + c.crl + ": " + message(e));
      }
    }
    String hostIdentity = null;
    if (cert != null) {
      try {
        PeerIdentity id = PeerIdentity.fromCertificate(cert);
        hostIdentity = id.toUri();
        if (!RegionHost.HOST_TENANT.equals(id.tenant())) {
          errors.add(
              c.where("tls.certificate")
                  + ": "
                  + c.certificate
                  + " names "
                  + id
                  + "; a host needs an identity srdma://"
                  + RegionHost.HOST_TENANT
                  + "/<name> (srdma cert issue --tenant "
                  + RegionHost.HOST_TENANT
                  + " --peer NAME)");
        }
      } catch (KeyExchangeException e) {
        errors.add(c.where("tls.certificate") + ": " + c.certificate + ": " + message(e));
      }
    }
    if (cert != null && key != null && !matches(cert, key)) {
      errors.add(c.where("tls.key") + ": " + c.key + " is not the key of " + c.certificate);
    }
    if (ca != null && crl != null) {
      try {
        RevocationList list = RevocationList.of(crl, ca);
        if (cert != null) {
          DeploymentTrust.of(ca, list)
              .verify(new X509Certificate[] {cert}, CertificateUsage.TLS_SERVER);
        }
      } catch (KeyExchangeException e) {
        String at =
            e.reason() == KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN
                    || e.reason() == KeyExchangeException.Reason.CRL_ROLLBACK
                    || e.reason() == KeyExchangeException.Reason.IO_ERROR
                ? c.where("tls.crl") + ": " + c.crl
                : c.where("tls.certificate") + ": " + c.certificate;
        errors.add(at + ": " + message(e) + " (checked against " + c.caCertificate + ")");
      }
    }
    // policy and regions
    Policy policy = null;
    String policyText = null;
    if (readable(c.policyFile, c.where("policy.file"), errors)) {
      try {
        byte[] bytes = readPolicy(c.policyFile);
        policy = new PolicyLoader().parse(c.policyFile.toString(), bytes);
        policyText = new String(bytes, StandardCharsets.UTF_8);
      } catch (PolicyRejectedException e) {
        errors.add(
            c.where("policy.file")
                + ": "
                + c.policyFile
                + " is not a valid policy ("
                + e.errors().size()
                + " errors):");
        e.errors().forEach(pe -> errors.add("  " + pe));
      } catch (PolicyException e) {
        errors.add(c.where("policy.file") + ": " + Addresses.explain(e));
      }
    }
    if (policy != null) {
      for (ServeConfig.RegionSpec r : c.regions) {
        Tenant t = policy.tenants().get(r.tenant());
        Region pr = t == null ? null : t.regions().get(r.region());
        long max = pr == null ? 0 : Math.min(pr.size(), Integer.MAX_VALUE - 8);
        if (t == null) {
          errors.add(c.where(r.at()) + ": the policy has no tenant '" + r.tenant() + "'");
        } else if (pr == null) {
          errors.add(
              c.where(r.at())
                  + ": the policy's tenant '"
                  + r.tenant()
                  + "' has no region '"
                  + r.region()
                  + "' (it has "
                  + String.join(", ", t.regions().keySet())
                  + ")");
        } else if (r.size() > max) {
          errors.add(
              c.where(r.at())
                  + ": size "
                  + r.size()
                  + " of "
                  + r.tenant()
                  + "/"
                  + r.region()
                  + " exceeds "
                  + max
                  + " bytes (the policy's size"
                  + (pr.size() > max ? ", capped at 2 GiB - 8 per region" : "")
                  + ")");
        }
      }
    }
    // audit log: its directory must exist and be writable; the file is opened at start
    Path auditDir = c.auditFile.toAbsolutePath().getParent();
    if (auditDir == null || !Files.isDirectory(auditDir)) {
      errors.add(c.where("audit.file") + ": directory " + auditDir + " does not exist");
    } else if (!Files.isWritable(auditDir)) {
      errors.add(c.where("audit.file") + ": directory " + auditDir + " is not writable");
    } else if (Files.isDirectory(c.auditFile)) {
      errors.add(c.where("audit.file") + ": " + c.auditFile + " is a directory");
    }
    // provider and device
    try {
      RdmaProviders.firstDevice(c.provider);
    } catch (VerbsException e) {
      errors.add(c.where("provider") + ": " + c.provider + ": " + Addresses.explain(e));
    }
    try {
      deviceOptions(c).conclude();
    } catch (VerbsException e) {
      errors.add(c.where("device") + ": " + Addresses.explain(e));
    }
    ConsoleConfig console = c.console ? prepareConsole(c, errors) : null;
    if (console != null && policy != null && policy.consoleUsers().isEmpty()) {
      LOG.warn(
          "the console runs but the policy {} has no console users: nobody can log in",
          c.policyFile);
    }
    if (!errors.isEmpty()) {
      throw new ServeConfig.ConfigException(errors);
    }
    // everything else is good: only now is the CRL-number file read and written. The highest CRL
    // number accepted survives restarts, so a list put back while the host was down is refused.
    DeploymentTrust trust;
    RevocationList watched;
    try {
      watched = RevocationList.watching(c.crl, ca, crlNumberFile(c));
      watched.reload();
      trust = DeploymentTrust.of(ca, watched);
    } catch (KeyExchangeException e) {
      throw new ServeConfig.ConfigException(
          List.of(
              c.where("tls.crl")
                  + ": "
                  + c.crl
                  + ": "
                  + message(e)
                  + " (highest number accepted so far: "
                  + crlNumberFile(c)
                  + ")"));
    }
    // a clustered host keeps the highest pushed policy serial it applied the same way
    HighWaterMark policySerials = null;
    if (c.cluster != null) {
      try {
        policySerials = HighWaterMark.read(policySerialFile(c), "policy serial");
      } catch (KeyExchangeException e) {
        throw new ServeConfig.ConfigException(List.of(c.where("cluster") + ": " + message(e)));
      }
    }
    return new Prepared(
        Credential.of(cert, key),
        trust,
        policy,
        policyText,
        hostIdentity,
        console,
        watched,
        policySerials);
  }

  /**
   * The policy file's bytes; one over the loader's limit is handed to {@link PolicyLoader#load},
   * which refuses it without reading it.
   */
  private static byte[] readPolicy(Path file) {
    try {
      if (Files.size(file) > PolicyLoader.DEFAULT_MAX_FILE_BYTES) {
        new PolicyLoader().load(file);
      }
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new PolicyException(
          PolicyException.Category.IO, "cannot read policy file " + file + ": " + e, e);
    }
  }

  /**
   * Checks the {@code console:} section's files (certificate chain, key and passphrase, metrics
   * token) and settings; adds every error and returns null if there was one.
   */
  private static ConsoleConfig prepareConsole(ServeConfig c, List<String> errors) {
    int before = errors.size();
    char[] pass = null;
    if (c.consoleKeyPassphraseFile != null) {
      try {
        pass = KeyCommands.readPassphrase(c.consoleKeyPassphraseFile);
      } catch (KeyExchangeException e) {
        errors.add(c.where("console.key-passphrase-file") + ": " + message(e));
      }
    }
    List<X509Certificate> chain = null;
    PrivateKey key = null;
    try {
      String at = c.where("console.certificate-chain");
      if (readable(c.consoleCertificateChain, at, errors)) {
        try {
          chain = Pem.readCertificates(c.consoleCertificateChain);
          if (chain.isEmpty()) {
            errors.add(at + ": " + c.consoleCertificateChain + ": no certificate in the file");
            chain = null;
          }
        } catch (KeyExchangeException e) {
          errors.add(at + ": " + c.consoleCertificateChain + ": " + message(e));
        }
      }
      if (readable(c.consoleKey, c.where("console.key"), errors)) {
        try {
          key = Pem.readPrivateKey(c.consoleKey, pass);
        } catch (KeyExchangeException e) {
          errors.add(c.where("console.key") + ": " + c.consoleKey + ": " + message(e));
        }
      }
    } finally {
      KeyCommands.wipe(pass);
    }
    if (chain != null) {
      try {
        chain.get(0).checkValidity();
      } catch (CertificateExpiredException | CertificateNotYetValidException e) {
        errors.add(
            c.where("console.certificate-chain")
                + ": "
                + c.consoleCertificateChain
                + ": the first certificate is not valid now (valid "
                + chain.get(0).getNotBefore().toInstant()
                + " to "
                + chain.get(0).getNotAfter().toInstant()
                + ")");
      }
      if (key != null && !matches(chain.get(0), key)) {
        errors.add(
            c.where("console.key")
                + ": "
                + c.consoleKey
                + " is not the key of the first certificate in "
                + c.consoleCertificateChain);
      }
    }
    char[] token = null;
    String tokenAt = c.where("console.metrics-token-file");
    if (readable(c.consoleMetricsTokenFile, tokenAt, errors)) {
      try {
        token = KeyCommands.readPassphrase(c.consoleMetricsTokenFile);
        if (token.length < 32) {
          errors.add(
              tokenAt
                  + ": the token (the first line of "
                  + c.consoleMetricsTokenFile
                  + ") must be at least 32 characters, got "
                  + token.length);
        }
      } catch (KeyExchangeException e) {
        errors.add(
            tokenAt
                + ": "
                + (e.reason() == KeyExchangeException.Reason.BAD_ARGUMENT
                    ? c.consoleMetricsTokenFile + " is empty (the token is its first line)"
                    : "cannot read " + c.consoleMetricsTokenFile));
      }
    }
    if (c.consoleListen != null
        && c.listen != null
        && c.consoleListen.getPort() != 0
        && c.consoleListen.equals(c.listen)) {
      errors.add(c.where("console.listen") + ": must differ from listen (" + c.listen + ")");
    }
    if (errors.size() > before) {
      KeyCommands.wipe(token);
      return null;
    }
    ConsoleConfig config =
        new ConsoleConfig()
            .host(c.consoleListen.getAddress().getHostAddress())
            .port(c.consoleListen.getPort())
            .tls(Credential.of(chain.get(0), key), chain.subList(1, chain.size()))
            .sessionTimeout(c.consoleSessionTimeout)
            .loginLimit(c.consoleLoginAttempts, c.consoleLoginWindow)
            .metricsToken(token);
    KeyCommands.wipe(token);
    try {
      return config.conclude();
    } catch (ConsoleException e) {
      errors.add(c.where("console") + ": " + e.getMessage());
      return null;
    }
  }

  private static X509Certificate readCertificate(Path file, String where, List<String> errors) {
    if (!readable(file, where, errors)) {
      return null;
    }
    try {
      return Pem.readCertificate(file);
    } catch (KeyExchangeException e) {
      errors.add(where + ": " + file + ": " + message(e));
      return null;
    }
  }

  private static boolean readable(Path file, String where, List<String> errors) {
    if (file == null) {
      return false;
    }
    if (!Files.isRegularFile(file)) {
      errors.add(where + ": " + file + " does not exist (or is not a file)");
      return false;
    }
    if (!Files.isReadable(file)) {
      errors.add(where + ": " + file + " is not readable");
      return false;
    }
    return true;
  }

  /** Whether {@code key} signs what the certificate's public key verifies. */
  private static boolean matches(X509Certificate cert, PrivateKey key) {
    try {
      String alg =
          "EC".equals(key.getAlgorithm()) ? "SHA256withECDSA" : "SHA256with" + key.getAlgorithm();
      byte[] probe = new byte[32];
      new SecureRandom().nextBytes(probe);
      Signature s = Signature.getInstance(alg);
      s.initSign(key);
      s.update(probe);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(alg);
      v.initVerify(cert.getPublicKey());
      v.update(probe);
      return v.verify(sig);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static String message(KeyExchangeException e) {
    return Addresses.explain(e);
  }

  /**
   * The device counters {@code /metrics} exports: on ibv, those of the host's device (the
   * provider's first, as {@link RegionHost} opens) from sysfs; none on soft, which has no sysfs
   * device.
   */
  private static DeviceCounters deviceCounters(String provider) {
    Device d = RdmaProviders.firstDevice(provider);
    return d.providerName().equals("ibv") ? DeviceCounters.of(d.name()) : null;
  }

  private static DeviceOptions deviceOptions(ServeConfig c) {
    return new DeviceOptions()
        .bindAddress(c.bindAddress)
        .bindPort(c.bindPort)
        .portNumber(c.ibvPort)
        .gidIndex(c.gidIndex);
  }

  // ------------------------------------------------------------------ start

  /** The data-path AEAD mode: --aead, else the configuration's aead, else property/env/auto. */
  private io.srdma.channel.record.AeadSelection.Mode aeadMode(ServeConfig c) {
    String m = aead != null ? aead : c.aead;
    return m != null
        ? io.srdma.channel.record.AeadSelection.Mode.parse(m, aead != null ? "--aead" : "aead")
        : io.srdma.channel.record.AeadSelection.requestedMode();
  }

  private static void start(ServeConfig c, Prepared p, Running r) {
    // keyed by audit.key beside the log (created 600), checkpoints signed by the host key
    r.auditLog =
        AuditLog.open(
            new AuditLogOptions(c.auditFile)
                .rotateBytes(c.auditRotateBytes)
                .signer(AuditSigner.of(p.credential().certificate(), p.credential().privateKey())));
    AuditTrail trail = new AuditTrail(r.auditLog);
    r.host =
        RegionHost.start(
            new HostOptions()
                .credential(p.credential())
                .trust(p.trust())
                .policy(p.policy())
                .audit(trail)
                .bind(c.listen)
                .provider(c.provider)
                .device(deviceOptions(c))
                .scoping(HostOptions.Scoping.valueOf(c.scoping.toUpperCase(Locale.ROOT)))
                .maxSessions(c.maxSessions)
                .maxSessionsPerTenant(c.maxSessionsPerTenant)
                .maxPendingHandshakes(c.maxPendingHandshakes)
                .maxPendingHandshakesPerAddress(c.maxPendingHandshakesPerAddress)
                .firstRecordTimeout(c.firstRecordTimeout)
                .maxRejectedRecords(c.maxRejectedRecords)
                .regionKeyRotation(c.regionKeyRotation)
                .allowedResponderAddresses(c.allowedResponderAddresses)
                .trustHelloAddress(c.trustHelloAddress)
                .authFailuresPerMinute(c.authFailuresPerMinute)
                .handshakeTimeout(c.handshakeTimeout)
                .requestTimeout(c.requestTimeout)
                .idleTimeout(c.idleTimeout)
                .maxSessionLifetime(c.maxSessionLifetime)
                .receiveDepth(c.receiveDepth)
                .maxRecordPayload(c.recordSize));
    for (ServeConfig.RegionSpec s : c.regions) {
      r.host.registerRegion(s.tenant(), s.region(), s.size());
      LOG.info("registered {}/{} ({} bytes)", s.tenant(), s.region(), s.size());
    }
    if (p.console() != null) {
      r.backend =
          new HostConsoleBackend(r.host, p.policyText(), c.auditFile, deviceCounters(c.provider));
    }
    if (c.watchPolicy) {
      r.watcher = watch(c.policyFile, r.host, r.backend, trail);
    }
    if (c.cluster != null) {
      GrantAuthority mirror = new GrantAuthority(r.host.policy());
      r.cluster =
          ServeCluster.join(
              c.cluster,
              p.hostIdentity(),
              mirror,
              reloadListener("etcd", null, mirror, r.host, r.backend, trail),
              r.backend,
              p.revocations(),
              c.crl,
              r.host,
              r.auditLog,
              p.trust().caCertificate(),
              p.policySerials());
      if (r.backend != null) {
        r.backend.cluster(ServeCluster.view(r.cluster));
      }
    }
    if (p.console() != null) {
      RegionHost host = r.host;
      r.console =
          ConsoleServer.start(p.console(), r.backend, new ConsoleUsers(host::policy), trail);
    }
  }

  /**
   * Watches the policy file. {@link PolicyWatcher} installs a changed, valid file into an
   * authority; this one is a mirror holding no grants (the host owns the real one), and each
   * installed policy goes on to {@link RegionHost#reloadPolicy}, which revokes what the new policy
   * forbids. With a console, its backend then takes the file's text, so that the console shows the
   * policy in force.
   */
  private static PolicyWatcher watch(
      Path file, RegionHost host, HostConsoleBackend backend, AuditTrail trail) {
    GrantAuthority mirror = new GrantAuthority(host.policy());
    return PolicyWatcher.start(
        file,
        new PolicyLoader(),
        mirror,
        reloadListener(file.toString(), file, mirror, host, backend, trail));
  }

  /**
   * What a reloaded policy goes through, from a watched file or from the cluster's etcd: put in
   * force on the host (revoking what it forbids, audited), or the mirror reset if that fails; a
   * refused policy is audited and the one in force stays.
   *
   * @param source the policy's origin, for logs
   * @param file the file whose text the console then shows, or null (the cluster hands it over)
   */
  static PolicyWatcher.Listener reloadListener(
      String source,
      Path file,
      GrantAuthority mirror,
      RegionHost host,
      HostConsoleBackend backend,
      AuditTrail trail) {
    return new PolicyWatcher.Listener() {
      @Override
      public void reloaded(ReloadResult result) {
        try {
          ReloadResult r = host.reloadPolicy(result.current(), AuditTrail.SYSTEM);
          LOG.info(
              "policy {} reloaded (sha256 {}); {} live grant(s) revoked",
              source,
              r.current().sha256(),
              r.forbidden().size());
          if (backend != null && file != null) {
            consoleText(file, backend);
          }
        } catch (RuntimeException e) {
          mirror.reload(host.policy());
          LOG.error("policy {} could not be put in force; the old one stays", source, e);
        }
      }

      @Override
      public void rejected(PolicyException error) {
        try {
          trail.reloadRejected(error, AuditTrail.SYSTEM);
        } catch (RuntimeException e) {
          LOG.error("audit of a refused reload failed", e);
        }
        LOG.warn("policy {} refused, the policy in force stays: {}", source, error.getMessage());
      }
    };
  }

  /** Hands the reloaded file's text to the console; a file changed again meanwhile is skipped. */
  private static void consoleText(Path file, HostConsoleBackend backend) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      LOG.warn("policy {} reloaded but its text could not be re-read for the console: {}", file, e);
      return;
    }
    if (!backend.policyReloaded(text)) {
      LOG.info(
          "policy {} changed again since the reload; the console shows it after the next", file);
    }
  }

  /**
   * Where the host keeps the highest CRL number it accepted: beside the audit log, in a directory
   * the host must be able to write and others must not.
   */
  static Path crlNumberFile(ServeConfig c) {
    return c.auditFile.toAbsolutePath().resolveSibling(CRL_NUMBER_FILE);
  }

  /** The file name of {@link #crlNumberFile}. */
  static final String CRL_NUMBER_FILE = "srdma-crl-number";

  /**
   * Where a clustered host keeps the highest pushed policy serial it applied (and that policy's
   * hash), beside the CRL-number file.
   */
  static Path policySerialFile(ServeConfig c) {
    return c.auditFile.toAbsolutePath().resolveSibling(POLICY_SERIAL_FILE);
  }

  /** The file name of {@link #policySerialFile}. */
  static final String POLICY_SERIAL_FILE = "srdma-policy-serial";
}
