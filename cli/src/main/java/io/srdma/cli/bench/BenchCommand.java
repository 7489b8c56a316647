package io.srdma.cli.bench;

import io.srdma.bench.transport.AeadBound;
import io.srdma.bench.transport.BenchContext;
import io.srdma.bench.transport.BenchRunner;
import io.srdma.bench.transport.CpuModel;
import io.srdma.bench.transport.CpuSplit;
import io.srdma.bench.transport.LoadConfig;
import io.srdma.bench.transport.LoadResult;
import io.srdma.bench.transport.LoadRun;
import io.srdma.bench.transport.Measurement;
import io.srdma.bench.transport.Payload;
import io.srdma.bench.transport.PipelineDepth;
import io.srdma.bench.transport.Progress;
import io.srdma.bench.transport.Report;
import io.srdma.bench.transport.RoundSummary;
import io.srdma.bench.transport.Transports;
import io.srdma.channel.record.AeadException;
import io.srdma.channel.record.AeadPlan;
import io.srdma.channel.record.AeadRates;
import io.srdma.channel.record.AeadSelection;
import io.srdma.cli.SizeConverter;
import io.srdma.host.HostOptions;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code srdma bench}: the end-to-end benchmark. Moves messages between two endpoints in this JVM
 * over loopback with every selected transport and prints, per message size, delivered throughput,
 * sender write-completion throughput, one-way latency percentiles, CPU per GB and context switches
 * per message, with ratios against the {@code tls-jdk} and {@code plain-write} baselines.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "End-to-end benchmark: secure RDMA against TLS and plain RDMA, on loopback in one JVM.",
      "",
      "For each message size and transport: a warm-up, a throughput run (messages stream from a"
          + " sender to a receiver; a message counts when the receiver has all of it, decrypted),"
          + " then a latency run (one message at a time; one-way time from send start to the"
          + " receiver having it, the receiver's ack only paces the run).",
      "Transports: tls-jdk (JDK SSLSocket, TLS 1.3, mutual auth), tls-netty (Netty + BoringSSL),"
          + " plain-write (plaintext RDMA WRITE_WITH_IMM on --provider).",
      "Tables go to stdout (Markdown), progress to stderr. See docs/bench.md.",
      "",
      "--load runs a bounded load test of the sealed channel instead: --sessions clients over"
          + " --tenants tenants holding --grants live grants write for --duration (default 60s,"
          + " after --warmup, default 5s) while grants are revoked and clients rekey; prints"
          + " throughput, write latency, memory, descriptors, threads and errors by kind, and per"
          + " side (host, clients) threads, descriptors and memory per session and the set-up rate"
          + " against bare mutual TLS 1.3 handshakes, with a verdict per issue 17 target;"
          + " --host-process runs the host in a child JVM, each side measured in its own process.",
      ""
    },
    footer = {
      "",
      "Exit status: 0 measured (transports unavailable here are listed with the reason),"
          + " 1 a run failed, 2 bad options, 3 every selected transport unavailable.",
      "With --load: 0 passed, 1 an unintended error or memory/descriptor/thread growth after"
          + " the warm-up beyond the documented thresholds, 2 bad options.",
      "Example: srdma bench --quick --sizes 64,4KiB --transports tls-jdk,plain-write --json r.json",
      "Example: srdma bench --load --sessions 500 --tenants 20 --grants 10500 --duration 60s"
    })
public final class BenchCommand implements Callable<Integer> {
  static final String DEFAULT_SIZES = "64,4096,65536,1048576";
  static final Duration QUICK_DURATION = Duration.ofSeconds(1);
  static final Duration QUICK_WARMUP = Duration.ofMillis(250);
  static final int MIN_SIZE = Payload.MIN_SIZE;

  /** {@code --load}'s bound on sessions (issue 17 asks for 5,000; see docs/bench.md). */
  static final int MAX_LOAD_SESSIONS = 10_000;

  static final int MAX_SIZE = 64 << 20;
  static final long MAX_RING_BYTES = 1L << 30;

  @Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--sizes",
      split = ",",
      paramLabel = "SIZE",
      defaultValue = DEFAULT_SIZES,
      converter = SizeConverter.Int.class,
      description =
          "Message sizes, comma separated, like 64, 4KiB, 1MiB or 10kB: KiB/MiB are powers of"
              + " 1024, kB/MB of 1000 (docs/units.md) (default: ${DEFAULT-VALUE}). "
              + MIN_SIZE
              + " B to 64 MiB.")
  List<Integer> sizes;

  @Option(
      names = "--duration",
      paramLabel = "TIME",
      converter = DurationConverter.class,
      description =
          "Length of each measured run, per size per transport (throughput and latency each)"
              + " (default: 3s; --quick: 1s). Like 500ms, 3s, 1m.")
  Duration duration;

  @Option(
      names = "--warmup",
      paramLabel = "TIME",
      converter = DurationConverter.class,
      description =
          "Length of each warm-up run before measuring, 0 for none (default: 1s; --quick: 250ms).")
  Duration warmup;

  @Option(
      names = "--transports",
      split = ",",
      paramLabel = "NAME",
      description =
          "Transports to run, comma separated, in table order (default: all: ${COMPLETION-CANDIDATES}).",
      completionCandidates = TransportNames.class)
  List<String> transports;

  @Option(
      names = "--provider",
      paramLabel = "NAME",
      defaultValue = "soft",
      description =
          "RDMA provider for plain-write (and sealed): soft, ibv, loopback or auto (default: ${DEFAULT-VALUE}).")
  String provider;

  @Option(
      names = "--aead",
      paramLabel = "MODE",
      description =
          "AES-256-GCM of the sealed data path: auto (of the JDK's, ACCP's, OpenSSL"
              + " libcrypto's and libgcrypt's, by a known-answer test and a rate check at"
              + " start-up, the fastest for small records and the fastest for large ones, which"
              + " may be two), jdk, accp, openssl or gcrypt (one for every record; an error when it"
              + " is unavailable)"
              + " (default: the srdma.aead property, else SRDMA_AEAD, else auto).")
  String aead;

  @Option(
      names = "--depth",
      paramLabel = "N|auto",
      defaultValue = "auto",
      description =
          "Pipeline depth: messages outstanding (sent, not yet delivered) at once in throughput"
              + " runs of plain-write and sealed: 1 to 1024 at every size, or auto: up to 256 KiB"
              + " of messages in flight, 16 to 256 messages (256 up to 1 KiB, 64 at 4 KiB, 16 from"
              + " 16 KiB), as TLS's stream keeps its socket buffers in flight (default:"
              + " ${DEFAULT-VALUE}). Latency runs use 1.")
  String depthText;

  private PipelineDepth depth;

  @Option(
      names = "--coalesce",
      paramLabel = "N",
      defaultValue = "1",
      description =
          "Throughput runs send up to N messages that follow each other as one unit, at most"
              + " 64 KiB: sealed as one record (contiguous pieces of one batch write, one AES-GCM"
              + " operation), plain-write as one WRITE, tls-jdk as one write call; tls-netty always"
              + " flushes every 16 (its own coalescing). Every message is still counted and its"
              + " sequence number checked. Latency runs send one at a time. 1 = each message on"
              + " its own (default: ${DEFAULT-VALUE}). 1 to 1024.")
  int coalesce;

  @Option(
      names = "--writer-cpus",
      paramLabel = "LIST",
      description =
          "Run the writing side on these CPUs (a Linux CPU list: 0, 0-1, 0,2): the thread that"
              + " writes and every thread it starts (client completion lanes and soft responders,"
              + " Netty's sender loop). Same for every transport. Default: unpinned.")
  String writerCpus;

  @Option(
      names = "--receiver-cpus",
      paramLabel = "LIST",
      description =
          "Run the receiving side's threads on these CPUs: for sealed the host's openers and soft"
              + " responders (HostOptions.openerCpus, DeviceOptions.responderCpus), for plain-write"
              + " the receiving device's responders and receiver thread, for tls-jdk the receiver"
              + " thread, for tls-netty the server's event loop. Default: unpinned.")
  String receiverCpus;

  @Option(
      names = "--receive-progress",
      paramLabel = "MODE",
      defaultValue = "poller",
      description =
          "Who places the receiving side's incoming requests on the soft provider: poller (the"
              + " thread that polls the completion queue: sealed's openers, plain-write's receiver"
              + " thread; the host's default, HostOptions.openerProgress) or device (the soft"
              + " device's responder threads, which wake the poller). Same for sealed and"
              + " plain-write (default: ${DEFAULT-VALUE}).")
  String receiveProgress;

  private CpuSplit cpuSplit = CpuSplit.NONE;

  @Option(
      names = "--rounds",
      paramLabel = "N",
      defaultValue = "1",
      description =
          "Run the whole comparison N times, one round after another, and add a summary: per"
              + " transport and size the median and range over the rounds, with each ratio taken"
              + " within one round (default: ${DEFAULT-VALUE}). 1 to 100. For noisy machines.")
  int rounds;

  @Option(
      names = "--json",
      paramLabel = "FILE",
      description =
          "Also write every result, machine-readable, to FILE (with --load: the load run's"
              + " figures, per side, and issue 17's targets).")
  Path json;

  @Option(
      names = "--quick",
      description = "Short runs for a smoke test: --duration 1s --warmup 250ms.")
  boolean quick;

  @Option(
      names = "--verify",
      description =
          "Checksum (CRC32C) every message on both sides in the measured runs too; costs CPU, so"
              + " figures are lower. Sequence numbers are always checked.")
  boolean verify;

  @Option(
      names = "--progress",
      paramLabel = "MODE",
      defaultValue = "auto",
      description =
          "Progress on stderr: auto (a bar when on a terminal, else lines), bar, lines or none"
              + " (default: ${DEFAULT-VALUE}).")
  Progress.Mode progressMode;

  @Option(
      names = "--load",
      description =
          "Run the load test (sealed channel, many sessions, tenants and grants, revocations and"
              + " rekeys under way) instead of the transport comparison. See docs/bench.md.")
  boolean load;

  @Option(
      names = "--sessions",
      paramLabel = "N",
      defaultValue = "500",
      description = "--load: concurrent client sessions (default: ${DEFAULT-VALUE}).")
  int sessions;

  @Option(
      names = "--tenants",
      paramLabel = "N",
      defaultValue = "20",
      description =
          "--load: tenants, each with a 1 MiB region; sessions are spread over them"
              + " (default: ${DEFAULT-VALUE}).")
  int tenants;

  @Option(
      names = "--grants",
      paramLabel = "N",
      defaultValue = "10500",
      description =
          "--load: live write grants in all, on disjoint ranges, ceil(N / sessions) per session"
              + " (default: ${DEFAULT-VALUE}).")
  int grants;

  @Option(
      names = "--record-size",
      paramLabel = "SIZE",
      defaultValue = "256",
      converter = SizeConverter.Int.class,
      description = "--load: payload of each write, one sealed record (default: ${DEFAULT-VALUE}).")
  int recordSize;

  @Option(
      names = "--window",
      paramLabel = "N",
      defaultValue = "4",
      description =
          "--load: writes per session not yet opened by the host (default: ${DEFAULT-VALUE}).")
  int window;

  @Option(
      names = "--revocations-per-second",
      paramLabel = "R",
      defaultValue = "20",
      description =
          "--load: target rate of revoke / check-refused / re-grant cycles, 0 for none"
              + " (default: ${DEFAULT-VALUE}).")
  double revocationsPerSecond;

  @Option(
      names = "--rekey-records",
      paramLabel = "N",
      defaultValue = "500",
      description =
          "--load: each client moves to a new key epoch after this many records"
              + " (default: ${DEFAULT-VALUE}).")
  long rekeyRecords;

  @Option(
      names = "--host-process",
      description =
          "--load: run the host in a child JVM (same Java and class path) so host and clients are"
              + " each measured in their own process, with their own descriptor limit; the child"
              + " is stopped (or killed) whatever way the run ends.")
  boolean hostProcess;

  @Option(
      names = "--opener-threads",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "--load: the host's opener threads (1.."
              + HostOptions.MAX_OPENER_THREADS
              + "); default: the host's own, the number of cores.")
  int openerThreads;

  @Override
  public Integer call() throws Exception {
    if (load) {
      return runLoad();
    }
    if (hostProcess) {
      throw new ParameterException(spec.commandLine(), "--host-process applies to --load only");
    }
    if (openerThreads != 0) {
      throw new ParameterException(spec.commandLine(), "--opener-threads applies to --load only");
    }
    BenchRunner.Config config = validate();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    AeadSelection.Choice cipher;
    try {
      cipher = chooseAead();
    } catch (AeadException e) {
      err.println("bench: " + e.getMessage());
      return 1;
    }
    Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    out.println(headline(config, cipher));
    out.flush();
    List<List<Measurement>> byRound = new ArrayList<>();
    List<Map<Integer, AeadBound.Rate>> bounds = new ArrayList<>();
    boolean sealed = config.transports().stream().anyMatch(Report::sealed);
    Map<String, String> negotiated;
    try (BenchContext context = new BenchContext(provider, config.depth(), coalesce, cpuSplit)) {
      Progress progress =
          new Progress(
              err, progressMode, rounds * config.transports().size() * config.sizes().size());
      BenchRunner runner = new BenchRunner(config, context, progress);
      for (int r = 1; r <= rounds; r++) {
        List<Measurement> round = runner.runRound();
        byRound.add(round);
        if (rounds > 1) {
          out.printf(Locale.ROOT, "%n## Round %d of %d%n", r, rounds);
        }
        Report.printTables(out, config.sizes(), round);
        Map<Integer, AeadBound.Rate> bound = new LinkedHashMap<>();
        if (sealed) {
          for (int size : config.sizes()) {
            // the bound of the records the sealed transport seals: coalesced ones are larger
            int sealedAs =
                size <= Payload.COALESCED_BYTES ? Payload.coalesced(coalesce, size) * size : size;
            bound.put(size, AeadBound.measure(sealedAs, AeadBound.slice(config.duration())));
          }
        }
        bounds.add(bound);
        Report.printBounds(out, config.sizes(), round, bound, cipher.plan().label());
      }
      progress.finish();
      negotiated = runner.negotiated();
      Report.printNegotiated(out, negotiated, sealed, cipher.plan().label());
    }
    List<RoundSummary.Row> summary =
        rounds > 1 ? RoundSummary.rows(config.sizes(), byRound, bounds) : List.of();
    if (rounds > 1) {
      RoundSummary.print(out, config.sizes(), summary, rounds);
    }
    List<Measurement> results = new ArrayList<>();
    byRound.forEach(results::addAll);
    if (json != null) {
      Files.writeString(
          json,
          Report.json(
              header(started, cipher, negotiated),
              configJson(config),
              byRound,
              bounds,
              AeadBound::providerFor,
              RoundSummary.json(summary)),
          StandardCharsets.UTF_8);
      err.println("bench: results written to " + json);
    }
    if (results.stream().anyMatch(m -> Measurement.FAILED.equals(m.status()))) {
      return 1;
    }
    if (results.stream().noneMatch(Measurement::ok)) {
      err.println("bench: nothing was measured: every selected transport is unavailable here");
      return 3;
    }
    return 0;
  }

  private int runLoad() throws Exception {
    CommandLine cl = spec.commandLine();
    for (String o :
        List.of(
            "--sizes",
            "--transports",
            "--depth",
            "--coalesce",
            "--quick",
            "--verify",
            "--rounds",
            "--writer-cpus",
            "--receiver-cpus")) {
      if (cl.getParseResult().hasMatchedOption(o)) {
        throw new ParameterException(cl, o + " does not apply to --load");
      }
    }
    Duration d = duration != null ? duration : Duration.ofSeconds(60);
    Duration w = warmup != null ? warmup : Duration.ofSeconds(5);
    if (d.isZero() || d.isNegative() || d.compareTo(Duration.ofHours(1)) > 0) {
      throw new ParameterException(cl, "--duration must be more than 0 and at most 1h, got " + d);
    }
    if (w.isNegative() || w.compareTo(Duration.ofHours(1)) > 0) {
      throw new ParameterException(cl, "--warmup must be 0 to 1h, got " + w);
    }
    if (sessions > MAX_LOAD_SESSIONS || tenants > 1000 || grants > 200_000) {
      throw new ParameterException(
          cl,
          "--load is bounded: at most "
              + MAX_LOAD_SESSIONS
              + " sessions, 1000 tenants, 200000 grants");
    }
    if (json != null && Files.isDirectory(json)) {
      throw new ParameterException(cl, "--json: " + json + " is a directory");
    }
    LoadConfig c =
        new LoadConfig(
            sessions,
            tenants,
            grants,
            d,
            w,
            recordSize,
            window,
            revocationsPerSecond,
            rekeyRecords,
            provider,
            hostProcess,
            openerThreads);
    String problem = c.problem();
    if (problem != null) {
      throw new ParameterException(cl, "--load: " + problem);
    }
    PrintWriter out = cl.getOut();
    PrintWriter err = cl.getErr();
    AeadSelection.Choice cipher;
    try {
      cipher = chooseAead();
    } catch (AeadException e) {
      err.println("bench: " + e.getMessage());
      return 1;
    }
    out.printf(
        Locale.ROOT,
        "srdma bench --load: AEAD %s, JDK %s, %d CPUs, load average %.2f, max heap %d MiB%n%n",
        cipher.plan().description(),
        Runtime.version(),
        Runtime.getRuntime().availableProcessors(),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        Runtime.getRuntime().maxMemory() >> 20);
    out.flush();
    Instant started = Instant.now();
    LoadResult r;
    try (LoadRun run = new LoadRun(c, err)) {
      r = run.run();
      // reported before closing: a failure to close (reported after) must not lose the figures
      LoadRun.print(out, r);
      if (json != null) {
        Files.writeString(
            json,
            Report.json(LoadResult.json(header(started, cipher, Map.of()), r)),
            StandardCharsets.UTF_8);
        err.println("bench: results written to " + json);
      }
    }
    return r.ok() ? 0 : 1;
  }

  private BenchRunner.Config validate() {
    CommandLine cl = spec.commandLine();
    boolean explicitDuration = duration != null;
    boolean explicitWarmup = warmup != null;
    if (quick && (explicitDuration || explicitWarmup)) {
      throw new ParameterException(
          cl, "--quick sets --duration and --warmup; give either --quick or those options");
    }
    Duration d = explicitDuration ? duration : quick ? QUICK_DURATION : Duration.ofSeconds(3);
    Duration w = explicitWarmup ? warmup : quick ? QUICK_WARMUP : Duration.ofSeconds(1);
    if (d.isZero() || d.isNegative() || d.compareTo(Duration.ofHours(1)) > 0) {
      throw new ParameterException(cl, "--duration must be more than 0 and at most 1h, got " + d);
    }
    if (w.isNegative() || w.compareTo(Duration.ofHours(1)) > 0) {
      throw new ParameterException(cl, "--warmup must be 0 to 1h, got " + w);
    }
    if (sizes == null || sizes.isEmpty()) {
      throw new ParameterException(cl, "--sizes needs at least one size");
    }
    for (int s : sizes) {
      if (s < MIN_SIZE || s > MAX_SIZE) {
        throw new ParameterException(
            cl,
            "--sizes: each size must be "
                + MIN_SIZE
                + " B to 64 MiB, got "
                + io.srdma.policy.Units.formatSize(s),
            spec.findOption("--sizes"),
            String.valueOf(s));
      }
    }
    try {
      depth = PipelineDepth.parse(depthText);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, e.getMessage());
    }
    if (coalesce < 1 || coalesce > 1024) {
      throw new ParameterException(cl, "--coalesce must be 1 to 1024, got " + coalesce);
    }
    if (rounds < 1 || rounds > 100) {
      throw new ParameterException(cl, "--rounds must be 1 to 100, got " + rounds);
    }
    for (int size : sizes) {
      if ((long) size * depth.forSize(size) > MAX_RING_BYTES) {
        throw new ParameterException(
            cl,
            "--depth "
                + depth.forSize(size)
                + " x size "
                + size
                + " needs more than 1 GiB of registered memory for plain-write; lower one of them");
      }
    }
    List<String> names =
        transports == null ? new ArrayList<>(Transports.REGISTRY.keySet()) : transports;
    List<String> chosen = new ArrayList<>();
    for (String n : names) {
      String t = n.trim().toLowerCase(Locale.ROOT);
      if (!Transports.REGISTRY.containsKey(t)) {
        throw new ParameterException(
            cl,
            "--transports: unknown transport '"
                + n
                + "'; known: "
                + String.join(", ", Transports.REGISTRY.keySet()));
      }
      if (chosen.contains(t)) {
        throw new ParameterException(cl, "--transports: '" + t + "' given twice");
      }
      chosen.add(t);
    }
    if (chosen.isEmpty()) {
      throw new ParameterException(cl, "--transports needs at least one transport");
    }
    if (provider == null || provider.isBlank()) {
      throw new ParameterException(cl, "--provider must name a provider: soft, ibv or auto");
    }
    if (json != null && Files.isDirectory(json)) {
      throw new ParameterException(cl, "--json: " + json + " is a directory");
    }
    cpuSplit =
        CpuSplitOption.parse(cl, writerCpus, receiverCpus)
            .withReceiveProgress(CpuSplitOption.progress(cl, receiveProgress));
    return new BenchRunner.Config(List.copyOf(sizes), d, w, List.copyOf(chosen), depth, verify);
  }

  /** The process's data-path AEAD: {@code --aead}, else the property or environment, else auto. */
  private AeadSelection.Choice chooseAead() {
    if (aead == null) {
      return AeadSelection.current();
    }
    return AeadSelection.select(AeadSelection.Mode.parse(aead, "--aead"));
  }

  private String headline(BenchRunner.Config c, AeadSelection.Choice cipher) {
    return String.format(
        Locale.ROOT,
        "srdma bench: %s per run after %s warm-up, depth %s%s, provider %s, AEAD %s%s%s, receive"
            + " progress %s; JDK %s, %d CPUs (%s), load average %.2f",
        Report.duration(c.duration()),
        Report.duration(c.warmup()),
        depthLine(c),
        coalesce > 1 ? ", coalescing up to " + coalesce + " messages per unit" : "",
        provider,
        cipher.plan().description(),
        c.verify() ? ", verifying every message" : "",
        cpuSplit.active() ? ", " + cpuSplit.describe() : "",
        cpuSplit.receiveProgress().name().toLowerCase(Locale.ROOT),
        Runtime.version(),
        Runtime.getRuntime().availableProcessors(),
        CpuModel.read().describe(),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  /** "16", or "auto (256 at 64 B, 16 at 4 KiB)". */
  private static String depthLine(BenchRunner.Config c) {
    if (!c.depth().isAuto()) {
      return c.depth().toString();
    }
    List<String> each = new ArrayList<>();
    for (int size : c.sizes()) {
      each.add(c.depth().forSize(size) + " at " + io.srdma.policy.Units.formatSize(size));
    }
    return "auto (" + String.join(", ", each) + ")";
  }

  private Map<String, Object> header(
      Instant started, AeadSelection.Choice cipher, Map<String, String> negotiated) {
    Map<String, Object> h = new LinkedHashMap<>();
    h.put("tool", "srdma bench");
    h.put("formatVersion", 1);
    h.put("startedAt", started.toString());
    h.put("command", String.join(" ", spec.commandLine().getParseResult().originalArgs()));
    Map<String, Object> machine = new LinkedHashMap<>();
    machine.put("cpus", Runtime.getRuntime().availableProcessors());
    CpuModel cpu = CpuModel.read();
    machine.put("cpuModel", cpu.name());
    machine.put("cpuFamily", cpu.family());
    machine.put("cpuModelNumber", cpu.model());
    machine.put("cpuFeatures", new ArrayList<Object>(cpu.features()));
    machine.put("java", Runtime.version().toString());
    machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    machine.put(
        "loadAverage",
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    h.put("machine", machine);
    h.put("aead", aeadJson(cipher));
    h.put("negotiated", negotiated);
    return h;
  }

  /** The data-path AEAD: which, why, and the start-up rate check of every candidate. */
  static Map<String, Object> aeadJson(AeadSelection.Choice cipher) {
    Map<String, Object> a = new LinkedHashMap<>();
    AeadPlan plan = cipher.plan();
    a.put("provider", plan.label());
    a.put("description", plan.description());
    a.put("small", plan.small().name());
    a.put("bulk", plan.bulk().name());
    a.put("bulkFrom", plan.isSingle() ? null : plan.bulkFrom());
    a.put("mode", cipher.mode().label());
    a.put("reason", cipher.reason());
    a.put("accpUnavailable", cipher.accpUnavailable());
    a.put("opensslUnavailable", cipher.opensslUnavailable());
    a.put("gcryptUnavailable", cipher.gcryptUnavailable());
    List<Object> checks = new ArrayList<>();
    for (AeadRates r : cipher.rates()) {
      for (AeadRates.Rate x : r.bySize()) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("provider", r.provider());
        one.put("recordSize", x.size());
        one.put("sealMBps", x.sealMBps());
        one.put("openMBps", x.openMBps());
        checks.add(one);
      }
    }
    a.put("rateCheck", checks);
    a.put(
        "efficiency",
        "sealed deliveredMBps / min(aeadSealMBps, aeadOpenMBps), both measured in the same round,"
            + " the AEAD on one core through RecordSealer and RecordOpener");
    return a;
  }

  private Map<String, Object> configJson(BenchRunner.Config c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("sizes", new ArrayList<Object>(c.sizes()));
    m.put("durationMs", c.duration().toMillis());
    m.put("warmupMs", c.warmup().toMillis());
    m.put("transports", new ArrayList<Object>(c.transports()));
    m.put("provider", provider);
    m.put("depth", c.depth().toString());
    Map<String, Object> bySize = new LinkedHashMap<>();
    for (int size : c.sizes()) {
      bySize.put(Integer.toString(size), c.depth().forSize(size));
    }
    m.put("depthBySize", bySize);
    m.put("coalesce", coalesce);
    m.put("rounds", rounds);
    m.put("verify", c.verify());
    Map<String, Object> cpus = new LinkedHashMap<>();
    cpus.put("writer", cpuSplit.writer() == null ? null : cpuSplit.writer().toString());
    cpus.put("receiver", cpuSplit.receiver() == null ? null : cpuSplit.receiver().toString());
    m.put("cpus", cpus);
    m.put("receiveProgress", cpuSplit.receiveProgress().name().toLowerCase(Locale.ROOT));
    m.put("latency", "one-way, send start to receiver delivered, same-JVM System.nanoTime");
    m.put("cpu", "process CPU time during the throughput run / bytes delivered (both endpoints)");
    m.put(
        "switches",
        "process context switches (getrusage, voluntary + involuntary) during the throughput run"
            + " / messages delivered (both endpoints)");
    return m;
  }

  /** The transport names for {@code --help}. */
  static final class TransportNames extends ArrayList<String> {
    TransportNames() {
      super(Transports.REGISTRY.keySet());
    }
  }

  /** {@code 500ms}, {@code 3s}, {@code 1m}, {@code 0}, or ISO-8601 {@code PT3S}. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern TIME =
        Pattern.compile("(\\d{1,9})\\s*(ms|s|m|min)?", Pattern.CASE_INSENSITIVE);

    @Override
    public Duration convert(String value) {
      String v = value.trim();
      Matcher m = TIME.matcher(v);
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase(Locale.ROOT);
        return switch (unit) {
          case "ms" -> Duration.ofMillis(n);
          case "m", "min" -> Duration.ofMinutes(n);
          default -> Duration.ofSeconds(n);
        };
      }
      try {
        return Duration.parse(v);
      } catch (RuntimeException e) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a duration (like 500ms, 3s, 1m)");
      }
    }
  }
}
