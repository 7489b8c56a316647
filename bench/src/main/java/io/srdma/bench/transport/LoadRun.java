package io.srdma.bench.transport;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.HostOptions;
import io.srdma.host.HostStats;
import io.srdma.host.HostedRegion;
import io.srdma.host.ReceivedRecord;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RekeyPolicy;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * {@code srdma bench --load}: a bounded load test of the sealed channel. One {@link RegionHost}
 * with one 1 MiB region per tenant; {@code sessions} {@link SecureRdmaClient}s spread over {@code
 * tenants} tenants, each holding {@code ceil(grants / sessions)} write grants on disjoint ranges of
 * its tenant's region. Every session writes one-record messages round-robin over its grants, at
 * most {@code window} not yet opened by the host; the host checks each session's sequence numbers.
 * Meanwhile a revoker takes a grant out of a session's rotation, waits until the host opened every
 * record written under it, revokes it ({@code host.revoke}), waits until the holder is told, checks
 * that a write on it is refused with {@code REVOKED} (intended), asks for a replacement and puts it
 * back; every tenth cycle it also asks for a grant outside the region, which must be denied
 * (intended). Clients rekey every {@code rekeyRecords} records.
 *
 * <p>Anything else that fails is an unintended error, counted by kind. After the warm-up and at the
 * end (before closing) heap, direct memory, open file descriptors and threads are sampled; growth
 * beyond {@link #HEAP_SLACK} (or a quarter of the start heap), {@link #DIRECT_SLACK}, {@link
 * #FD_SLACK} descriptors or {@link #THREAD_SLACK} threads fails the run.
 *
 * <p>Split by job: {@link LoadConfig} (what to run), {@link LoadPolicy} (the generated policy),
 * {@link LoadRevoker}, {@link LoadSample} (resources and their thresholds), {@link LoadResult} (the
 * outcome and its report), {@link LoadHost} (the host in this process, or in a child JVM with
 * {@code hostProcess}: {@link LoadHostProcess}, {@link LoadHostMain}). What stays here, some 400
 * lines of code, is the set-up, the measuring and the sessions' flow control, which share the run's
 * counters and would only pass them around if split further.
 */
public final class LoadRun implements AutoCloseable {
  static final long REGION_BYTES = 1L << 20;
  static final long HEAP_SLACK = 64L << 20;
  static final long DIRECT_SLACK = 8L << 20;
  static final int FD_SLACK = 32;
  static final int THREAD_SLACK = 32;

  /** Name prefix of the bench's own threads (drivers, connectors, revoker, handshake floor). */
  static final String BENCH_THREAD = ThreadCensus.BENCH_PREFIX;

  /** Bare mutual TLS handshakes of the set-up rate's floor: the sessions, 100 to 1,000. */
  static int floorHandshakes(int sessions) {
    return Math.max(100, Math.min(1000, sessions));
  }

  /** Sessions set up at once; all come from one loopback address. */
  static final int CONNECTORS = 8;

  static final Duration STEP_TIMEOUT = Duration.ofSeconds(20);

  /** How long closing waits for the host's sessions to end after their clients closed. */
  private static final Duration CLOSE_DRAIN = Duration.ofMinutes(2);

  static final Duration TTL = Duration.ofHours(2);
  static final int HEADER = Integer.BYTES + Long.BYTES;
  static final int READ_BYTES = 4096;

  final LoadConfig config;
  private final PrintWriter log;
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private final Recorder latency = new Recorder(3);
  final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicBoolean measuring = new AtomicBoolean();
  final AtomicLong revocations = new AtomicLong();
  final AtomicLong refusedRevokedWrites = new AtomicLong();
  final AtomicLong intendedDenials = new AtomicLong();
  private final ExecutorService driver;
  private Path dir;
  private AuditLog audit;
  volatile LoadHost host;
  private volatile LoadHostProcess hostProcess;
  volatile Session[] sessions;

  /** Called once the host runs (its process started, with --host-process): a test's seam. */
  Runnable afterHostStart = () -> {};

  public LoadRun(LoadConfig config, PrintWriter log) {
    String problem = config.problem();
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
    this.config = config;
    this.log = log;
    AtomicInteger n = new AtomicInteger();
    this.driver =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, BENCH_THREAD + "driver-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  void error(String kind) {
    errors.computeIfAbsent(kind, k -> new LongAdder()).increment();
  }

  static String tenant(int t) {
    return "t" + t;
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
        .maxPendingHandshakesPerAddress(CONNECTORS * 2)
        .handshakeTimeout(STEP_TIMEOUT)
        .requestTimeout(STEP_TIMEOUT)
        .receiveDepth(Math.max(16, config.window() * 4));
  }

  /** The child process of the host with --host-process, or null. */
  LoadHostProcess hostProcess() {
    return hostProcess;
  }

  /** Sets up, warms up, measures, drains and samples; closing is {@link #close}'s. */
  public LoadResult run() throws Exception {
    long setupStart = System.nanoTime();
    dir = Files.createTempDirectory("srdma-load");
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    Set<Long> beforeHost = ThreadCensus.ids();
    Set<Integer> neitherPorts = FdCensus.listeningPortsNow();
    PeerIdentity hostIdentity = PeerIdentity.of(RegionHost.HOST_TENANT, "load");
    Credential hostCredential = ca.issuePeer(hostIdentity, Duration.ofDays(1));
    Credential floorClient =
        ca.issuePeer(PeerIdentity.of(tenant(0), "p-floor"), Duration.ofDays(1));
    int floorCount = floorHandshakes(config.sessions());
    double floor;
    Set<Long> hostStart;
    Set<Integer> hostPorts;
    if (config.hostProcess()) {
      hostCredential.writeTo(
          dir.resolve(LoadHostMain.HOST_CRT), dir.resolve(LoadHostMain.HOST_KEY), null);
      Path stderr = Files.createTempFile("srdma-load-host-", ".log");
      LoadHostProcess child = LoadHostProcess.start(dir, config, stderr, this::opened);
      hostProcess = child;
      host = child;
      log.printf(
          Locale.ROOT,
          "load: host in process %d (its stderr: %s), listening at %s%n",
          child.handle().pid(),
          stderr,
          child.address());
      // this process's baseline again: starting a process started the JDK's "process reaper"
      beforeHost = ThreadCensus.ids();
      hostStart = Set.of();
      hostPorts = Set.of();
      afterHostStart.run();
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
                CONNECTORS,
                STEP_TIMEOUT);
      } finally {
        child.floorStop();
      }
    } else {
      audit = AuditLog.open(dir.resolve("audit.jsonl"));
      RegionHost inProcess =
          RegionHost.start(hostOptions(config, hostCredential, ca.trust(), audit));
      host = LoadHost.of(inProcess);
      for (int t = 0; t < config.tenants(); t++) {
        HostedRegion r = inProcess.registerRegion(tenant(t), "data", REGION_BYTES);
        r.onRecord(this::onRecord);
      }
      hostStart = ThreadCensus.ids();
      hostStart.removeAll(beforeHost);
      hostPorts = FdCensus.listeningPortsNow();
      hostPorts.removeAll(neitherPorts);
      afterHostStart.run();
      logFloor(floorCount);
      floor =
          HandshakeFloor.measure(
              hostCredential,
              floorClient,
              ca.trust(),
              hostIdentity,
              floorCount,
              CONNECTORS,
              STEP_TIMEOUT);
    }
    LoadSample idle = LoadSample.take();
    LoadHostProcess.Sample hostIdle = hostProcess != null ? hostProcess.sample() : null;
    ThreadCensus threadsIdle = ThreadCensus.take(beforeHost, hostStart);
    FdCensus fdsIdle = FdCensus.take(hostPorts, neitherPorts);
    sessions = new Session[config.sessions()];
    RekeyPolicy rekey = RekeyPolicy.fromSystemProperties().withMaxRecords(config.rekeyRecords());
    AtomicInteger connectors = new AtomicInteger();
    ExecutorService connector =
        Executors.newFixedThreadPool(
            CONNECTORS,
            r -> new Thread(r, BENCH_THREAD + "connect-" + connectors.incrementAndGet()));
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
                          .host(host.address())
                          .hostName("load")
                          .provider(config.provider())
                          .connectTimeout(STEP_TIMEOUT)
                          .requestTimeout(STEP_TIMEOUT)
                          .maxRecordPayload(config.recordSize())
                          .stagingSlots(config.window() + 2)
                          .maxReadBytes(READ_BYTES)
                          .sealingThreads(0)
                          .rekeyPolicy(rekey);
                  Session s = new Session(index, index / config.tenants(), o);
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
      for (Session s : sessions) {
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
    Duration setup = Duration.ofNanos(System.nanoTime() - setupStart);
    log.printf(
        Locale.ROOT,
        "load: %d sessions, %d tenants, %d live grants set up in %.1f s; warming up %s%n",
        host.stats().sessions(),
        config.tenants(),
        host.stats().liveGrants(),
        setup.toNanos() / 1e9,
        Report.duration(config.warmup()));
    log.flush();

    HostStats base = host.stats();
    for (Session s : sessions) {
      s.kick();
    }
    Thread revoker = new Thread(new LoadRevoker(this)::run, "srdma-load-revoker");
    revoker.setDaemon(true);
    revoker.start();
    sleepUntilOrFailed(System.nanoTime() + config.warmup().toNanos());

    LoadSample start = LoadSample.take();
    LoadHostProcess.Sample hostLoaded = hostProcess != null ? hostProcess.sample() : null;
    ThreadCensus threadsLoaded = ThreadCensus.take(beforeHost, hostStart);
    FdCensus fdsLoaded = FdCensus.take(hostPorts, neitherPorts);
    HostStats atStart = host.stats();
    long epochsStart = epochs();
    latency.reset();
    measuring.set(true);
    long t0 = System.nanoTime();
    log.printf(Locale.ROOT, "load: measuring for %s%n", Report.duration(config.duration()));
    log.flush();
    sleepUntilOrFailed(t0 + config.duration().toNanos());
    HostStats atEnd = host.stats();
    Duration measured = Duration.ofNanos(System.nanoTime() - t0);
    Histogram h = latency.getIntervalHistogram();
    measuring.set(false);
    long epochsEnd = epochs();

    running.set(false);
    revoker.join(STEP_TIMEOUT.toMillis() * 3);
    if (revoker.isAlive()) {
      error("revoker:stuck");
    }
    for (Session s : sessions) {
      if (!s.failed
          && !await(
              () -> s.completed.get() == s.issued.get() && s.delivered.get() == s.issued.get())) {
        error("drain:timeout");
      }
    }
    LoadSample end = LoadSample.take();
    ThreadCensus threadsEnd = ThreadCensus.take(beforeHost, hostStart);
    LoadFootprint footprint;
    if (hostProcess != null) {
      // each process is one side: the host's figures are its process's, the clients' this one's
      LoadHostProcess.Sample hostEnd = hostProcess.sample();
      footprint =
          new LoadFootprint(
              config.sessions(),
              idle,
              start,
              sides(hostIdle, threadsIdle),
              sides(hostLoaded, threadsLoaded),
              sides(hostEnd, threadsEnd),
              new FdCensus((int) hostIdle.process().fds(), (int) idle.fds(), 0),
              new FdCensus((int) hostLoaded.process().fds(), (int) start.fds(), 0),
              recordBufferBytes(config),
              connectNanos,
              floor,
              floorCount,
              LoadSample.fdLimit(),
              hostIdle.process(),
              hostLoaded.process());
    } else {
      footprint =
          new LoadFootprint(
              config.sessions(),
              idle,
              start,
              threadsIdle,
              threadsLoaded,
              threadsEnd,
              fdsIdle,
              fdsLoaded,
              recordBufferBytes(config),
              connectNanos,
              floor,
              floorCount,
              LoadSample.fdLimit());
    }
    HostStats last = host.stats();
    hostErrors(base, last);
    if (hostProcess != null) {
      hostProcess.errors().forEach(this::count);
    }
    List<String> violations = LoadSample.thresholds(start, end);
    Map<String, Long> byKind = new TreeMap<>();
    errors.forEach((k, v) -> byKind.put(k, v.sum()));
    return new LoadResult(
        config,
        setup,
        measured,
        atEnd.recordsOpened() - atStart.recordsOpened(),
        atEnd.bytesOpened() - atStart.bytesOpened(),
        h,
        start,
        end,
        atStart.liveGrants(),
        last.liveGrants(),
        last.sessions(),
        revocations.get(),
        refusedRevokedWrites.get(),
        intendedDenials.get(),
        epochsEnd - epochsStart,
        byKind,
        violations,
        footprint);
  }

  private void logFloor(int floorCount) {
    log.printf(
        Locale.ROOT, "load: %d bare mutual TLS 1.3 handshakes (the set-up floor)%n", floorCount);
    log.flush();
  }

  /**
   * Threads per side with the host in its own process: the host's are its process's host threads
   * (those it started while starting and {@code srdma-host-*}; any other there counted with them),
   * the clients' this process's non-bench threads; the bench's both processes' own.
   */
  private static ThreadCensus sides(LoadHostProcess.Sample h, ThreadCensus here) {
    return new ThreadCensus(
        h.hostThreads() + h.otherThreads(),
        here.host() + here.client(),
        here.bench() + h.benchThreads(),
        here.clientByName());
  }

  /** With --host-process: the host process opened {@code count} records of session {@code i}. */
  private void opened(int i, long count) {
    Session[] all = sessions;
    Session s = all != null && i >= 0 && i < all.length ? all[i] : null;
    if (s != null && s.delivered.accumulateAndGet(count, Math::max) == count) {
      s.kick();
    }
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
                        PeerIdentity.of(tenant(index % config.tenants()), "p-" + index),
                        Duration.ofDays(1));
                return null;
              }));
    }
    awaitAll(done, "credentials");
    return out;
  }

  /** The clients' user-sized record buffers per session: staging slots and the read buffer. */
  static long recordBufferBytes(LoadConfig c) {
    return (long) (c.window() + 2) * (c.recordSize() + SealedLayout.RECORD_OVERHEAD) + READ_BYTES;
  }

  private void awaitAll(List<Future<?>> done, String step) throws InterruptedException {
    for (Future<?> f : done) {
      try {
        f.get(10, TimeUnit.MINUTES);
      } catch (ExecutionException e) {
        long connected = Stream.of(sessions).filter(java.util.Objects::nonNull).count();
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

  private void sleepUntilOrFailed(long deadline) throws InterruptedException {
    while (System.nanoTime() < deadline) {
      Thread.sleep(Math.min(250, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
    }
  }

  private long epochs() {
    long sum = 0;
    for (Session s : sessions) {
      sum += s.client.epoch();
    }
    return sum;
  }

  private void hostErrors(HostStats base, HostStats last) {
    count("host:auth-failures", last.authFailures() - base.authFailures());
    count("host:rate-limited", last.rateLimited() - base.rateLimited());
    count("host:quota-refusals", last.quotaRefusals() - base.quotaRefusals());
    count("host:records-rejected", last.recordsRejected() - base.recordsRejected());
    count("host:remote-access-errors", last.remoteAccessErrors() - base.remoteAccessErrors());
    count("host:protocol-errors", last.protocolErrors() - base.protocolErrors());
    count("host:unexpected-denials", last.denials() - base.denials() - intendedDenials.get());
    count("host:sessions-lost", config.sessions() - last.sessions());
  }

  private void count(String kind, long n) {
    if (n > 0) {
      errors.computeIfAbsent(kind, k -> new LongAdder()).add(n);
    }
  }

  /** Host's receiver thread: one opened record. */
  private void onRecord(ReceivedRecord r) {
    ByteBuffer p = r.payload();
    if (p.remaining() != config.recordSize()) {
      error("record:length");
      return;
    }
    int index = p.getInt(p.position());
    long seq = p.getLong(p.position() + Integer.BYTES);
    Session s = index >= 0 && index < sessions.length ? sessions[index] : null;
    if (s == null || !s.client.identity().equals(r.identity())) {
      error("record:foreign");
      return;
    }
    if (seq != s.expected) {
      error("record:sequence");
    }
    s.expected = seq + 1;
    s.delivered.incrementAndGet();
    s.kick();
  }

  static boolean await(BooleanSupplier condition) {
    long deadline = System.nanoTime() + STEP_TIMEOUT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  static ChannelException.Reason reason(Throwable e) {
    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return c instanceof ChannelException ce ? ce.reason() : null;
  }

  /** One grant in a session's rotation: a disjoint range of the tenant's region. */
  static final class Slot {
    final long offset;
    volatile RemoteGrant grant;
    final AtomicInteger outstanding = new AtomicInteger();
    volatile long lastSeq = -1;
    int next;

    Slot(long offset, RemoteGrant grant) {
      this.offset = offset;
      this.grant = grant;
    }
  }

  /** One client, its grants and its flow control. */
  final class Session {
    final int index;
    final int local; // its index among its tenant's sessions
    final SecureRdmaClient client;
    final List<Slot> active = new ArrayList<>();
    final AtomicLong delivered = new AtomicLong();
    final AtomicLong completed = new AtomicLong();
    final AtomicBoolean scheduled = new AtomicBoolean();
    final ByteBuffer message;
    long expected; // host's receiver thread only
    final AtomicLong issued = new AtomicLong();
    int cursor; // guarded by this
    volatile boolean failed;

    Session(int index, int local, ClientOptions o) {
      this.index = index;
      this.local = local;
      this.client = SecureRdmaClient.connect(o);
      client.onSessionLost(
          e -> {
            failed = true;
            error("session-lost:" + e.reason());
          });
      this.message = ByteBuffer.allocate(config.recordSize());
      byte[] fill = new byte[config.recordSize()];
      new Random(index).nextBytes(fill);
      message.put(fill).clear();
    }

    void requestGrants() {
      int g = config.grantsPerSession();
      List<CompletableFuture<RemoteGrant>> asked = new ArrayList<>();
      for (int k = 0; k < g; k++) {
        long offset = ((long) local * g + k) * config.grantLength();
        asked.add(
            client
                .requestGrant("data", EnumSet.of(Access.WRITE), offset, config.grantLength(), TTL)
                .toCompletableFuture());
      }
      for (int k = 0; k < g; k++) {
        RemoteGrant grant = asked.get(k).join();
        active.add(new Slot(grant.offset(), grant));
      }
    }

    void kick() {
      if (running.get() && !failed && scheduled.compareAndSet(false, true)) {
        driver.execute(this::pump);
      }
    }

    void pump() {
      scheduled.set(false);
      synchronized (this) {
        while (running.get()
            && !failed
            && issued.get() - delivered.get() < config.window()
            && issued.get() - completed.get() < config.window()
            && !active.isEmpty()) {
          Slot slot = active.get(cursor++ % active.size());
          long offset = (slot.next++ % config.slotsPerGrant()) * config.sealedRecord();
          long seq = issued.getAndIncrement();
          message.putInt(0, index).putLong(Integer.BYTES, seq);
          slot.lastSeq = seq;
          slot.outstanding.incrementAndGet();
          long start = System.nanoTime();
          CompletionStage<Void> unused =
              slot.grant
                  .write(offset, message.duplicate().clear())
                  .whenComplete((v, e) -> written(slot, start, e));
        }
      }
    }

    private void written(Slot slot, long start, Throwable e) {
      if (e != null) {
        failed = true;
        error("write:" + reason(e));
      } else if (measuring.get()) {
        latency.recordValue(Math.max(0, System.nanoTime() - start));
      }
      slot.outstanding.decrementAndGet();
      completed.incrementAndGet();
      kick();
    }
  }

  /** Closes every client, then the host, and deletes the temporary CA and audit log. */
  @Override
  public void close() {
    running.set(false);
    driver.shutdownNow();
    if (sessions != null) {
      AtomicInteger closers = new AtomicInteger();
      ExecutorService closer =
          Executors.newFixedThreadPool(
              8, r -> new Thread(r, BENCH_THREAD + "close-" + closers.incrementAndGet()));
      List<Future<?>> done = new ArrayList<>();
      for (Session s : sessions) {
        if (s != null) {
          done.add(closer.submit(s.client::close));
        }
      }
      for (Future<?> f : done) {
        try {
          f.get(1, TimeUnit.MINUTES);
        } catch (Exception e) {
          log.println("load: closing a client: " + e);
        }
      }
      closer.shutdownNow();
      sessions = null;
    }
    if (host != null) {
      // the clients are closed: let their sessions end on the host before closing it (its close
      // waits 10 s + 10 ms a session, which a loaded machine with thousands can still outlast)
      try {
        drainHost();
      } catch (RuntimeException e) {
        log.println("load: waiting for the host's sessions to end: " + e.getMessage());
      }
      host.close();
      host = null;
    }
    if (hostProcess != null) {
      if (hostProcess.stoppedCleanly()) {
        try {
          Files.deleteIfExists(hostProcess.stderr());
        } catch (IOException e) {
          log.println("load: cannot delete " + hostProcess.stderr() + ": " + e.getMessage());
        }
      } else {
        log.println(
            "load: the host process did not stop cleanly; its stderr: " + hostProcess.stderr());
      }
    }
    if (audit != null) {
      audit.close();
      audit = null;
    }
    if (dir != null) {
      try (Stream<Path> s = Files.walk(dir)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        log.println("load: cannot delete " + dir + ": " + e.getMessage());
      }
      dir = null;
    }
  }

  private void drainHost() {
    long deadline = System.nanoTime() + CLOSE_DRAIN.toNanos();
    while (host.stats().sessions() > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    int left = host.stats().sessions();
    if (left > 0) {
      log.println(
          "load: "
              + left
              + " host sessions still open "
              + CLOSE_DRAIN.toSeconds()
              + " s after their clients closed; closing the host anyway");
    }
  }

  /** Open file descriptors of this process, or -1 (see {@link LoadSample#openFds}). */
  public static long openFds() {
    return LoadSample.openFds();
  }

  /** The report, Markdown, for stdout (see {@link LoadResult#print}). */
  public static void print(PrintWriter out, LoadResult r) {
    LoadResult.print(out, r);
  }
}
