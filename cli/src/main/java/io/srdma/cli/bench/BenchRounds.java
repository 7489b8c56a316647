package io.srdma.cli.bench;

import io.srdma.bench.transport.AeadBound;
import io.srdma.bench.transport.BenchContext;
import io.srdma.bench.transport.BenchRunner;
import io.srdma.bench.transport.Measurement;
import io.srdma.bench.transport.Payload;
import io.srdma.bench.transport.Progress;
import io.srdma.bench.transport.Report;
import io.srdma.bench.transport.RoundSummary;
import io.srdma.channel.record.AeadSelection;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The transport comparison of {@code srdma bench}: the headline, every round (its tables and, with
 * a sealed transport, the AEAD bound measured right around its throughput run), the negotiated
 * parameters, the summary over rounds, the JSON, and the exit status.
 */
final class BenchRounds {
  private BenchRounds() {}

  /** Runs {@code run}; 0 measured, 1 a run failed, 3 every selected transport unavailable. */
  static int run(
      Comparison run, AeadSelection.Choice cipher, String command, PrintWriter out, PrintWriter err)
      throws Exception {
    BenchRunner.Config config = run.config();
    int rounds = run.rounds();
    Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    out.println(BenchHeadline.comparison(run, cipher));
    out.flush();
    List<List<Measurement>> byRound = new ArrayList<>();
    List<Map<Integer, AeadBound.Rate>> bounds = new ArrayList<>();
    boolean sealed = config.transports().stream().anyMatch(Report::sealed);
    Map<String, String> negotiated;
    try (BenchContext context =
        new BenchContext(run.provider(), config.depth(), run.coalesce(), run.cpuSplit())) {
      Progress progress =
          new Progress(
              err, run.progress(), rounds * config.transports().size() * config.sizes().size());
      BenchRunner runner = new BenchRunner(config, context, progress);
      if (sealed) {
        // the bound of the records the sealed transport seals (coalesced ones are larger), in two
        // halves right around its throughput run at that size
        Duration half = AeadBound.slice(config.duration()).dividedBy(2);
        runner.boundProbe(
            size ->
                AeadBound.measure(
                    size <= Payload.COALESCED_BYTES
                        ? Payload.coalesced(run.coalesce(), size) * size
                        : size,
                    half));
      }
      for (int r = 1; r <= rounds; r++) {
        List<Measurement> round = runner.runRound();
        byRound.add(round);
        if (rounds > 1) {
          out.printf(Locale.ROOT, "%n## Round %d of %d%n", r, rounds);
        }
        Report.printTables(out, config.sizes(), round);
        Map<Integer, AeadBound.Rate> bound = runner.lastRoundBounds();
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
    if (run.json() != null) {
      Files.writeString(
          run.json(),
          Report.json(
              BenchJson.header(started, command, cipher, negotiated),
              BenchJson.config(run),
              byRound,
              bounds,
              AeadBound::providerFor,
              RoundSummary.json(summary)),
          StandardCharsets.UTF_8);
      err.println("bench: results written to " + run.json());
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
}
