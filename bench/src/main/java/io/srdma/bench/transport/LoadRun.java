package io.srdma.bench.transport;

import io.srdma.channel.ChannelException;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.HostStats;
import io.srdma.host.ReceivedRecord;
import io.srdma.host.RegionHost;
import io.srdma.policy.AuditLog;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.HdrHistogram.Histogram;

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
 * <p>Split by job: {@link LoadConfig} (what to run), {@link LoadSetup} (the CA, the host, the
 * set-up floor, sessions and grants), {@link LoadSession} (a client and its flow control), {@link
 * LoadMeter} (errors by kind and the measured window's latency), {@link LoadRevoker}, {@link
 * LoadCensus} (whose threads and descriptors, sampled into a {@link LoadFootprint}), {@link
 * LoadSample} (resources and their thresholds), {@link LoadResult} (the outcome and its report),
 * {@link LoadPolicy} (the generated policy), {@link LoadHost} (the host in this process, or in a
 * child JVM with {@code hostProcess}: {@link LoadHostProcess}, {@link LoadHostMain}). What stays
 * here is the run's state and its phases: set-up, warm-up, the measured window, the drain and the
 * result; then closing ({@link LoadTeardown}).
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

  static final Duration TTL = Duration.ofHours(2);
  static final int HEADER = Integer.BYTES + Long.BYTES;
  static final int READ_BYTES = 4096;

  final LoadConfig config;
  private final PrintWriter log;
  final LoadMeter meter = new LoadMeter();
  final AtomicBoolean running = new AtomicBoolean(true);
  final AtomicLong revocations = new AtomicLong();
  final AtomicLong refusedRevokedWrites = new AtomicLong();
  final AtomicLong intendedDenials = new AtomicLong();
  final ExecutorService driver;
  // set by LoadSetup as it creates them, closed by close()
  Path dir;
  AuditLog audit;
  volatile LoadHost host;
  volatile LoadHostProcess hostProcess;
  volatile LoadSession[] sessions;

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
    meter.error(kind);
  }

  static String tenant(int t) {
    return "t" + t;
  }

  /** The child process of the host with --host-process, or null. */
  LoadHostProcess hostProcess() {
    return hostProcess;
  }

  /** Sets up, warms up, measures, drains and samples; closing is {@link #close}'s. */
  public LoadResult run() throws Exception {
    LoadSetup.Outcome setup = new LoadSetup(this, log).run();
    LoadCensus census = setup.census();

    HostStats base = host.stats();
    for (LoadSession s : sessions) {
      s.kick();
    }
    Thread revoker = new Thread(new LoadRevoker(this)::run, "srdma-load-revoker");
    revoker.setDaemon(true);
    revoker.start();
    sleepUntilOrFailed(System.nanoTime() + config.warmup().toNanos());

    LoadCensus.Snapshot loaded = census.take();
    HostStats atStart = host.stats();
    long epochsStart = epochs();
    meter.startMeasuring();
    long t0 = System.nanoTime();
    log.printf(Locale.ROOT, "load: measuring for %s%n", Report.duration(config.duration()));
    log.flush();
    sleepUntilOrFailed(t0 + config.duration().toNanos());
    HostStats atEnd = host.stats();
    Duration measured = Duration.ofNanos(System.nanoTime() - t0);
    Histogram h = meter.stopMeasuring();
    long epochsEnd = epochs();

    running.set(false);
    revoker.join(STEP_TIMEOUT.toMillis() * 3);
    if (revoker.isAlive()) {
      error("revoker:stuck");
    }
    for (LoadSession s : sessions) {
      if (!s.failed
          && !await(
              () -> s.completed.get() == s.issued.get() && s.delivered.get() == s.issued.get())) {
        error("drain:timeout");
      }
    }
    LoadSample start = loaded.sample();
    LoadSample end = LoadSample.take();
    ThreadCensus threadsEnd = census.threads();
    LoadFootprint footprint =
        census.footprint(
            config,
            setup.idle(),
            loaded,
            threadsEnd,
            setup.connectNanos(),
            setup.floor(),
            setup.floorCount());
    HostStats last = host.stats();
    meter.hostErrors(base, last, intendedDenials.get(), config.sessions());
    if (hostProcess != null) {
      hostProcess.errors().forEach(meter::count);
    }
    List<String> violations = LoadSample.thresholds(start, end);
    return new LoadResult(
        config,
        setup.took(),
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
        meter.byKind(),
        violations,
        footprint);
  }

  /** With --host-process: the host process opened {@code count} records of session {@code i}. */
  void opened(int i, long count) {
    LoadSession[] all = sessions;
    LoadSession s = all != null && i >= 0 && i < all.length ? all[i] : null;
    if (s != null && s.delivered.accumulateAndGet(count, Math::max) == count) {
      s.kick();
    }
  }

  /** The clients' user-sized record buffers per session: staging slots and the read buffer. */
  static long recordBufferBytes(LoadConfig c) {
    return (long) (c.window() + 2) * (c.recordSize() + SealedLayout.RECORD_OVERHEAD) + READ_BYTES;
  }

  private void sleepUntilOrFailed(long deadline) throws InterruptedException {
    while (System.nanoTime() < deadline) {
      Thread.sleep(Math.min(250, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
    }
  }

  private long epochs() {
    long sum = 0;
    for (LoadSession s : sessions) {
      sum += s.client.epoch();
    }
    return sum;
  }

  /** Host's receiver thread: one opened record. */
  void onRecord(ReceivedRecord r) {
    ByteBuffer p = r.payload();
    if (p.remaining() != config.recordSize()) {
      error("record:length");
      return;
    }
    int index = p.getInt(p.position());
    long seq = p.getLong(p.position() + Integer.BYTES);
    LoadSession s = index >= 0 && index < sessions.length ? sessions[index] : null;
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

  /** Closes every client, then the host, and deletes the temporary CA and audit log. */
  @Override
  public void close() {
    running.set(false);
    driver.shutdownNow();
    if (sessions != null) {
      LoadTeardown.closeClients(sessions, log);
      sessions = null;
    }
    if (host != null) {
      // the clients are closed: let their sessions end on the host before closing it (its close
      // waits 10 s + 10 ms a session, which a loaded machine with thousands can still outlast)
      try {
        LoadTeardown.drainHost(host, log);
      } catch (RuntimeException e) {
        log.println("load: waiting for the host's sessions to end: " + e.getMessage());
      }
      host.close();
      host = null;
    }
    if (hostProcess != null) {
      LoadTeardown.hostStderr(hostProcess, log);
    }
    if (audit != null) {
      audit.close();
      audit = null;
    }
    if (dir != null) {
      LoadTeardown.delete(dir, log);
      dir = null;
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
