package io.srdma.bench.transport;

import io.srdma.channel.ClientOptions;
import io.srdma.host.HostOptions;
import io.srdma.host.HostedRegion;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RekeyPolicy;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The set-up of a {@link LoadRun}, timed from its start to the last grant: a temporary CA, the host
 * (in this process or a child, with its regions), the set-up rate's floor of bare handshakes, the
 * idle sample, then every session connected and holding its grants. What it creates it hands to the
 * run as it goes ({@code dir}, {@code audit}, {@code host}, {@code hostProcess}, {@code sessions}),
 * so that the run's {@link LoadRun#close} closes it even when a step fails.
 */
final class LoadSetup {
  private final LoadRun run;
  private final LoadConfig config;
  private final PrintWriter log;

  /** What the set-up measured and the run goes on with. */
  record Outcome(
      LoadCensus census,
      LoadCensus.Snapshot idle,
      double floor,
      int floorCount,
      long connectNanos,
      Duration took) {}

  LoadSetup(LoadRun run, PrintWriter log) {
    this.run = run;
    this.config = run.config;
    this.log = log;
  }

  /** The host's options of a load run (the host's process or this one). */
  static HostOptions hostOptions(
      LoadConfig config, Credential credential, DeploymentTrust trust, AuditLog audit) {
    HostOptions options = new HostOptions();
    if (config.openerThreads() > 0) {
      options.openerThreads(config.openerThreads());
    }
    return options
        .credential(credential)
        .trust(trust)
        .policy(new PolicyLoader().parse("load-policy.yaml", LoadPolicy.text(config)))
        .audit(new AuditTrail(audit))
        .provider(config.provider())
        .maxSessions(config.sessions() + 8)
        .maxSessionsPerTenant(config.sessionsPerTenant() + 4)
        // every simulated peer connects from loopback, 8 at a time (the connector pool)
        .maxPendingHandshakesPerAddress(LoadRun.CONNECTORS * 2)
        .handshakeTimeout(LoadRun.STEP_TIMEOUT)
        .requestTimeout(LoadRun.STEP_TIMEOUT)
        .receiveDepth(Math.max(16, config.window() * 4));
  }

  Outcome run() throws Exception {
    long setupStart = System.nanoTime();
    run.dir = Files.createTempDirectory("srdma-load");
    DeploymentCa ca = DeploymentCa.init(run.dir.resolve("ca"), null);
    Set<Long> beforeHost = ThreadCensus.ids();
    Set<Integer> neitherPorts = FdCensus.listeningPortsNow();
    PeerIdentity hostIdentity = PeerIdentity.of(RegionHost.HOST_TENANT, "load");
    Credential hostCredential = ca.issuePeer(hostIdentity, Duration.ofDays(1));
    Credential floorClient =
        ca.issuePeer(PeerIdentity.of(LoadRun.tenant(0), "p-floor"), Duration.ofDays(1));
    int floorCount = LoadRun.floorHandshakes(config.sessions());
    double floor;
    LoadCensus census;
    if (config.hostProcess()) {
      hostCredential.writeTo(
          run.dir.resolve(LoadHostMain.HOST_CRT), run.dir.resolve(LoadHostMain.HOST_KEY), null);
      Path stderr = Files.createTempFile("srdma-load-host-", ".log");
      LoadHostProcess child = LoadHostProcess.start(run.dir, config, stderr, run::opened);
      run.hostProcess = child;
      run.host = child;
      log.printf(
          Locale.ROOT,
          "load: host in process %d (its stderr: %s), listening at %s%n",
          child.handle().pid(),
          stderr,
          child.address());
      // this process's baseline again: starting a process started the JDK's "process reaper"
      beforeHost = ThreadCensus.ids();
      census = new LoadCensus(beforeHost, Set.of(), Set.of(), neitherPorts, child);
      run.afterHostStart.run();
      logFloor(floorCount);
      InetSocketAddress floorAt = child.floorStart();
      try {
        floor =
            HandshakeFloor.connect(
                floorClient,
                ca.trust(),
                hostIdentity,
                floorAt,
                floorCount,
                LoadRun.CONNECTORS,
                LoadRun.STEP_TIMEOUT);
      } finally {
        child.floorStop();
      }
    } else {
      run.audit = AuditLog.open(run.dir.resolve("audit.jsonl"));
      RegionHost inProcess =
          RegionHost.start(hostOptions(config, hostCredential, ca.trust(), run.audit));
      run.host = LoadHost.of(inProcess);
      for (int t = 0; t < config.tenants(); t++) {
        HostedRegion r = inProcess.registerRegion(LoadRun.tenant(t), "data", LoadRun.REGION_BYTES);
        r.onRecord(run::onRecord);
      }
      Set<Long> hostStart = ThreadCensus.ids();
      hostStart.removeAll(beforeHost);
      Set<Integer> hostPorts = FdCensus.listeningPortsNow();
      hostPorts.removeAll(neitherPorts);
      census = new LoadCensus(beforeHost, hostStart, hostPorts, neitherPorts, null);
      run.afterHostStart.run();
      logFloor(floorCount);
      floor =
          HandshakeFloor.measure(
              hostCredential,
              floorClient,
              ca.trust(),
              hostIdentity,
              floorCount,
              LoadRun.CONNECTORS,
              LoadRun.STEP_TIMEOUT);
    }
    LoadCensus.Snapshot idle = census.take();
    long connectNanos = connect(ca);
    Duration setup = Duration.ofNanos(System.nanoTime() - setupStart);
    log.printf(
        Locale.ROOT,
        "load: %d sessions, %d tenants, %d live grants set up in %.1f s; warming up %s%n",
        run.host.stats().sessions(),
        config.tenants(),
        run.host.stats().liveGrants(),
        setup.toNanos() / 1e9,
        Report.duration(config.warmup()));
    log.flush();
    return new Outcome(census, idle, floor, floorCount, connectNanos, setup);
  }

  /** Connects every session, then asks for every session's grants; the connecting's nanos. */
  private long connect(DeploymentCa ca) throws InterruptedException {
    run.sessions = new LoadSession[config.sessions()];
    LoadSession[] sessions = run.sessions;
    RekeyPolicy rekey = RekeyPolicy.fromSystemProperties().withMaxRecords(config.rekeyRecords());
    AtomicInteger connectors = new AtomicInteger();
    ExecutorService connector =
        Executors.newFixedThreadPool(
            LoadRun.CONNECTORS,
            r -> new Thread(r, LoadRun.BENCH_THREAD + "connect-" + connectors.incrementAndGet()));
    long connectNanos;
    try {
      // issuing a peer's credential (an EC key pair and a signed certificate) is the CA's work
      // before a peer exists, not session set-up: issued before the clock starts, as the floor's
      Credential[] credentials = issuePeers(ca, connector);
      long connectStart = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < config.sessions(); i++) {
        int index = i;
        done.add(
            connector.submit(
                () -> {
                  ClientOptions o =
                      new ClientOptions()
                          .credential(credentials[index])
                          .trust(ca.trust())
                          .host(run.host.address())
                          .hostName("load")
                          .provider(config.provider())
                          .connectTimeout(LoadRun.STEP_TIMEOUT)
                          .requestTimeout(LoadRun.STEP_TIMEOUT)
                          .maxRecordPayload(config.recordSize())
                          .stagingSlots(config.window() + 2)
                          .maxReadBytes(LoadRun.READ_BYTES)
                          .sealingThreads(0)
                          .rekeyPolicy(rekey);
                  LoadSession s = new LoadSession(run, index, index / config.tenants(), o);
                  sessions[index] = s;
                  return null;
                }));
      }
      awaitAll(done, "connect");
      connectNanos = System.nanoTime() - connectStart;
      log.printf(
          Locale.ROOT,
          "load: %d sessions connected in %.1f s; asking for grants%n",
          config.sessions(),
          connectNanos / 1e9);
      log.flush();
      done.clear();
      for (LoadSession s : sessions) {
        done.add(
            connector.submit(
                () -> {
                  s.requestGrants();
                  return null;
                }));
      }
      awaitAll(done, "grants");
    } finally {
      connector.shutdownNow();
    }
    return connectNanos;
  }

  private void logFloor(int floorCount) {
    log.printf(
        Locale.ROOT, "load: %d bare mutual TLS 1.3 handshakes (the set-up floor)%n", floorCount);
    log.flush();
  }

  /** Every session's credential ({@code srdma://t(i mod tenants)/p-i}), issued on the pool. */
  private Credential[] issuePeers(DeploymentCa ca, ExecutorService pool)
      throws InterruptedException {
    Credential[] out = new Credential[config.sessions()];
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < out.length; i++) {
      int index = i;
      done.add(
          pool.submit(
              () -> {
                out[index] =
                    ca.issuePeer(
                        PeerIdentity.of(LoadRun.tenant(index % config.tenants()), "p-" + index),
                        Duration.ofDays(1));
                return null;
              }));
    }
    awaitAll(done, "credentials");
    return out;
  }

  private void awaitAll(List<Future<?>> done, String step) throws InterruptedException {
    for (Future<?> f : done) {
      try {
        f.get(10, TimeUnit.MINUTES);
      } catch (ExecutionException e) {
        long connected = Stream.of(run.sessions).filter(java.util.Objects::nonNull).count();
        throw new IllegalStateException(
            "load set-up failed ("
                + step
                + ", "
                + connected
                + " of "
                + config.sessions()
                + " sessions connected, "
                + LoadSample.openFds()
                + " descriptors open, limit "
                + LoadSample.fdLimit()
                + "): "
                + e.getCause(),
            e.getCause());
      } catch (java.util.concurrent.TimeoutException e) {
        throw new IllegalStateException("load set-up (" + step + ") took over 10 minutes", e);
      }
    }
  }
}
