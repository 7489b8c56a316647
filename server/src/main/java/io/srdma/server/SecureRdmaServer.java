package io.srdma.server;

import io.srdma.cluster.ClusterNode;
import io.srdma.console.ConsoleServer;
import io.srdma.console.HostConsoleBackend;
import io.srdma.host.HostOptions;
import io.srdma.host.RegionHost;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditLogOptions;
import io.srdma.policy.AuditSigner;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyWatcher;
import io.srdma.verbs.Device;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.doctor.DeviceCounters;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code srdma serve} runs: a {@link RegionHost} with its audit log, the policy watch, the
 * admin console and the cluster link, wired from a {@link ServeConfig}.
 *
 * <p>Three phases, so that a bad configuration starts nothing: the file is read and checked as a
 * whole ({@link ServeConfig#read}); then {@link #prepare} loads and checks everything it names
 * (certificates, key, CA, CRL, policy, regions against the policy, provider, audit directory); only
 * then does {@link #start} open the audit log, start the host, register the regions and start the
 * policy watch, the cluster link and the console. A failure to start undoes what was started.
 *
 * <p>With a {@code console:} section the admin console ({@link ConsoleServer}) runs in the same
 * process: started after the host, over a {@link HostConsoleBackend} of it, with the console users
 * of the policy in force; closed before the host.
 *
 * <p>Thread safety: {@link #start} is called once, by one thread; the accessors and {@link #close}
 * may then be called from any thread (a shutdown hook, a test), and close is idempotent.
 *
 * <p>Buffers: none pass through this class; the host's regions are its own ({@link RegionHost}).
 */
public final class SecureRdmaServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SecureRdmaServer.class);

  /** The file beside the audit log where the host keeps the highest CRL number it accepted. */
  public static final String CRL_NUMBER_FILE = ServeChecks.CRL_NUMBER_FILE;

  /**
   * The file beside the audit log where a clustered host keeps the highest pushed policy serial it
   * applied.
   */
  public static final String POLICY_SERIAL_FILE = ServeChecks.POLICY_SERIAL_FILE;

  private final ServeConfig config;
  private final ServeChecks.Prepared prepared;
  private final CountDownLatch closed = new CountDownLatch(1);
  // guarded by this: started once; a close during start closes what start then brings up
  private boolean started;
  private boolean closeRequested;
  private Running running;
  private volatile InetSocketAddress address;
  private volatile String consoleUrl;

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

  private SecureRdmaServer(ServeConfig config, ServeChecks.Prepared prepared) {
    this.config = config;
    this.prepared = prepared;
  }

  /**
   * Loads and checks everything the configuration names; starts nothing.
   *
   * @throws ServeConfig.ConfigException listing every error as {@code file:line:column: key: what}
   */
  public static SecureRdmaServer prepare(ServeConfig config) throws ServeConfig.ConfigException {
    return new SecureRdmaServer(config, ServeChecks.prepare(config));
  }

  /**
   * Opens the audit log, starts the host, registers the regions, then starts the policy watch, the
   * cluster link and the console, as configured.
   *
   * @throws RuntimeException if something could not start; what had started is closed again
   * @throws IllegalStateException if called twice
   */
  public void start() {
    Running r = new Running();
    synchronized (this) {
      if (started) {
        throw new IllegalStateException("already started");
      }
      started = true;
    }
    try {
      start(config, prepared, r);
    } catch (RuntimeException e) {
      r.close();
      closed.countDown();
      throw e;
    }
    address = r.host.address();
    consoleUrl = r.console == null ? null : r.console.url();
    boolean closeNow;
    synchronized (this) {
      closeNow = closeRequested;
      if (!closeNow) {
        running = r;
      }
    }
    if (closeNow) {
      try {
        r.close();
      } finally {
        closed.countDown();
      }
    }
  }

  /** The configuration this server runs. */
  public ServeConfig config() {
    return config;
  }

  /** The host's identity URI, {@code srdma://<host tenant>/<name>}, from its certificate. */
  public String hostIdentity() {
    return prepared.hostIdentity();
  }

  /** The policy the host started with. */
  public Policy policy() {
    return prepared.policy();
  }

  /** The host while it runs (started, not closed), else null. */
  public synchronized RegionHost host() {
    return running == null ? null : running.host;
  }

  /** The control-plane address once started, else null. */
  public InetSocketAddress address() {
    return address;
  }

  /** The console's URL once started with a console, else null. */
  public String consoleUrl() {
    return consoleUrl;
  }

  /**
   * Closes what runs, at most {@code limit} long: the console, the cluster link, the watch, then
   * the host (ending every session and revoking its grants), then the audit log. Idempotent: a
   * second caller waits for the first one's close, at most {@code limit}.
   *
   * @return whether everything was closed within the limit
   */
  public boolean close(Duration limit) {
    Running r;
    boolean neverStarted;
    synchronized (this) {
      r = running;
      running = null;
      closeRequested = true;
      neverStarted = !started;
      started = true; // never starts after a close
    }
    if (r == null) {
      if (neverStarted) {
        closed.countDown();
      }
      // closed by another caller, by a failed start, or by a start still under way
      return awaitClosed(limit);
    }
    LOG.info("srdma serve: stopping");
    Thread closer =
        new Thread(
            () -> {
              try {
                r.close();
              } finally {
                closed.countDown();
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
      return false;
    }
    return true;
  }

  /** Closes what runs within the configuration's {@code limits.shutdown-timeout}. */
  @Override
  public void close() {
    close(config.shutdownTimeout);
  }

  /** Waits until what ran is closed, at most {@code limit}; whether it is. */
  public boolean awaitClosed(Duration limit) {
    try {
      return closed.await(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return closed.getCount() == 0;
    }
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

  /** Where the host keeps the highest CRL number it accepted (beside the audit log). */
  public static Path crlNumberFile(ServeConfig c) {
    return ServeChecks.crlNumberFile(c);
  }

  private static void start(ServeConfig c, ServeChecks.Prepared p, Running r) {
    // keyed by audit.key beside the log (created 600), checkpoints signed by the host key
    r.auditLog =
        AuditLog.open(
            new AuditLogOptions(c.auditFile)
                .rotateBytes(c.auditRotateBytes)
                .signer(AuditSigner.of(p.credential().certificate(), p.credential().privateKey())));
    AuditTrail trail = new AuditTrail(r.auditLog);
    HostOptions options =
        new HostOptions()
            .credential(p.credential())
            .trust(p.trust())
            .policy(p.policy())
            .audit(trail)
            .bind(c.listen)
            .provider(c.provider)
            .device(ServeChecks.deviceOptions(c))
            .scoping(HostOptions.Scoping.valueOf(c.scoping.toUpperCase(Locale.ROOT)))
            .allowedResponderAddresses(c.allowedResponderAddresses)
            .trustHelloAddress(c.trustHelloAddress);
    limits(c, options);
    r.host = RegionHost.start(options);
    for (ServeConfig.RegionSpec s : c.regions) {
      r.host.registerRegion(s.tenant(), s.region(), s.size());
      LOG.info("registered {}/{} ({} bytes)", s.tenant(), s.region(), s.size());
    }
    if (p.console() != null) {
      r.backend =
          new HostConsoleBackend(r.host, p.policyText(), c.auditFile, deviceCounters(c.provider));
    }
    if (c.watchPolicy) {
      r.watcher = PolicyReloads.watch(c.policyFile, r.host, r.backend, trail);
    }
    if (c.cluster != null) {
      GrantAuthority mirror = new GrantAuthority(r.host.policy());
      r.cluster =
          ServeCluster.join(
              c.cluster,
              p.hostIdentity(),
              mirror,
              PolicyReloads.reloadListener("etcd", null, mirror, r.host, r.backend, trail),
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
   * Sets the host's limits from the file's {@code limits} section and {@code record-size}; the
   * thread counts left out of the file keep the host's defaults.
   */
  static HostOptions limits(ServeConfig c, HostOptions options) {
    options
        .maxSessions(c.maxSessions)
        .maxSessionsPerTenant(c.maxSessionsPerTenant)
        .maxPendingHandshakes(c.maxPendingHandshakes)
        .maxPendingHandshakesPerAddress(c.maxPendingHandshakesPerAddress)
        .firstRecordTimeout(c.firstRecordTimeout)
        .maxRejectedRecords(c.maxRejectedRecords)
        .regionKeyRotation(c.regionKeyRotation)
        .authFailuresPerMinute(c.authFailuresPerMinute)
        .handshakeTimeout(c.handshakeTimeout)
        .requestTimeout(c.requestTimeout)
        .idleTimeout(c.idleTimeout)
        .maxSessionLifetime(c.maxSessionLifetime)
        .receiveDepth(c.receiveDepth)
        .maxRecordPayload(c.recordSize)
        .connectThreads(c.connectThreads)
        .maxConnectsPerTenant(c.maxConnectsPerTenant);
    if (c.controlThreads != null) {
      options.controlThreads(c.controlThreads);
    }
    if (c.workerThreads != null) {
      options.workerThreads(c.workerThreads);
    }
    if (c.openerThreads != null) {
      options.openerThreads(c.openerThreads);
    }
    options.openerProgress(
        io.srdma.verbs.CompletionProgress.valueOf(c.openerProgress.toUpperCase(Locale.ROOT)));
    if (c.openerCpus != null) {
      options.openerCpus(c.openerCpus);
    }
    return options;
  }
}
