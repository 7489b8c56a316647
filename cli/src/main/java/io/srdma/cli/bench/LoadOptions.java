package io.srdma.cli.bench;

import io.srdma.bench.transport.LoadConfig;
import io.srdma.cli.SizeConverter;
import io.srdma.host.HostOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code srdma bench}'s {@code --load} options (a mixin of {@link BenchCommand}, last, so {@code
 * --help} lists them after the comparison's), and their check into a {@link LoadConfig}.
 */
final class LoadOptions {
  /** {@code --load}'s bound on sessions (issue 17 asks for 5,000; see docs/bench.md). */
  static final int MAX_LOAD_SESSIONS = 10_000;

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

  /**
   * The load run these options ask for, with the options both modes share.
   *
   * @throws ParameterException a comparison option given, or a value out of its bounds
   */
  LoadConfig config(
      CommandLine cl, Duration duration, Duration warmup, String provider, Path json) {
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
    return c;
  }
}
