package io.srdma.bench.transport;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code --rounds N}: every transport at every size over N rounds of the whole comparison. On a
 * small, shared machine one run of a transport can be 30 % off the next, so ratios are taken within
 * each round (the transports of a round ran minutes apart, not hours) and the summary gives their
 * median and range over the rounds.
 */
public final class RoundSummary {
  /**
   * One transport at one size over all rounds.
   *
   * @param transport the transport's name
   * @param messageSize bytes per message
   * @param roundsOk rounds in which it was measured
   * @param mbps delivered MB/s: median, min, max over those rounds
   * @param cpuSecondsPerGb median CPU s/GB
   * @param switchesPerMessage median context switches of the process per message delivered
   * @param p50Micros median of the rounds' one-way latency medians
   * @param vsTls MB/s over tls-jdk's in the same round: median, min, max
   * @param vsPlain MB/s over plain-write's in the same round: median, min, max
   * @param efficiency delivered MB/s over the AEAD bound of the same round (sealed transports):
   *     median, min, max
   */
  public record Row(
      String transport,
      int messageSize,
      int roundsOk,
      Spread mbps,
      double cpuSecondsPerGb,
      double switchesPerMessage,
      double p50Micros,
      Spread vsTls,
      Spread vsPlain,
      Spread efficiency) {}

  /** Median and range of some values; all NaN when there are none. */
  record Spread(double median, double min, double max) {
    static Spread of(double[] values) {
      double[] v = Arrays.stream(values).filter(x -> !Double.isNaN(x)).sorted().toArray();
      if (v.length == 0) {
        return new Spread(Double.NaN, Double.NaN, Double.NaN);
      }
      int mid = v.length / 2;
      double median = v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
      return new Spread(median, v[0], v[v.length - 1]);
    }
  }

  private RoundSummary() {}

  /** One row per size and transport, in the order of {@code sizes} and of round 1's results. */
  public static List<Row> rows(List<Integer> sizes, List<List<Measurement>> rounds) {
    return rows(sizes, rounds, List.of());
  }

  /** As {@link #rows(List, List)}, with each round's AEAD bound per size (may be empty). */
  public static List<Row> rows(
      List<Integer> sizes,
      List<List<Measurement>> rounds,
      List<Map<Integer, AeadBound.Rate>> bounds) {
    List<Row> out = new ArrayList<>();
    for (int size : sizes) {
      for (Measurement first : rounds.get(0)) {
        if (first.messageSize() != size) {
          continue;
        }
        String name = first.transport();
        int n = rounds.size();
        double[] mbps = new double[n];
        double[] cpu = new double[n];
        double[] switches = new double[n];
        double[] p50 = new double[n];
        double[] vsTls = new double[n];
        double[] vsPlain = new double[n];
        double[] efficiency = new double[n];
        int ok = 0;
        for (int r = 0; r < n; r++) {
          List<Measurement> round = rounds.get(r);
          Measurement m = find(round, name, size);
          boolean measured = m != null && m.ok();
          ok += measured ? 1 : 0;
          mbps[r] = measured ? m.deliveredMbPerSecond() : Double.NaN;
          cpu[r] = measured ? m.cpuSecondsPerGb() : Double.NaN;
          switches[r] = measured ? m.contextSwitchesPerMessage() : Double.NaN;
          p50[r] = measured ? m.p50Micros() : Double.NaN;
          vsTls[r] = measured ? ratio(m, round, Transports.TLS_BASELINE) : Double.NaN;
          vsPlain[r] = measured ? ratio(m, round, Transports.RDMA_BASELINE) : Double.NaN;
          efficiency[r] =
              measured && Report.sealed(name) && r < bounds.size()
                  ? AeadBound.efficiency(m, bounds.get(r).get(size))
                  : Double.NaN;
        }
        out.add(
            new Row(
                name,
                size,
                ok,
                Spread.of(mbps),
                Spread.of(cpu).median(),
                Spread.of(switches).median(),
                Spread.of(p50).median(),
                Spread.of(vsTls),
                Spread.of(vsPlain),
                Spread.of(efficiency)));
      }
    }
    return out;
  }

  private static Measurement find(List<Measurement> round, String transport, int size) {
    for (Measurement m : round) {
      if (m.transport().equals(transport) && m.messageSize() == size) {
        return m;
      }
    }
    return null;
  }

  private static double ratio(Measurement m, List<Measurement> round, String baseline) {
    return Report.ratio(m, round, baseline, Measurement::deliveredMbPerSecond);
  }

  /** The summary tables, one per size. */
  public static void print(PrintWriter out, List<Integer> sizes, List<Row> rows, int rounds) {
    out.printf(
        Locale.ROOT,
        "%n## Summary of %d rounds: medians, [min–max]; ratios taken within each round%n",
        rounds);
    for (int size : sizes) {
      out.printf(Locale.ROOT, "%n### %s messages, %d rounds%n%n", Report.size(size), rounds);
      out.println(
          "| transport | rounds measured | MB/s delivered | CPU s/GB | switches/msg | p50 µs"
              + " | MB/s vs tls-jdk | MB/s vs plain-write | efficiency vs AEAD bound |");
      out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
      for (Row r : rows) {
        if (r.messageSize() != size) {
          continue;
        }
        out.printf(
            Locale.ROOT,
            "| %s | %d | %s | %s | %s | %s | %s | %s | %s |%n",
            r.transport(),
            r.roundsOk(),
            spread(r.mbps(), "%,.1f"),
            fixed(r.cpuSecondsPerGb(), "%.2f"),
            fixed(r.switchesPerMessage(), "%.3f"),
            fixed(r.p50Micros(), "%,.1f"),
            spread(r.vsTls(), "%.2fx"),
            spread(r.vsPlain(), "%.2fx"),
            spread(r.efficiency(), "%.2f"));
      }
    }
    out.flush();
  }

  /** The rows as JSON values. */
  public static List<Object> json(List<Row> rows) {
    List<Object> out = new ArrayList<>();
    for (Row r : rows) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("transport", r.transport());
      m.put("messageSize", r.messageSize());
      m.put("roundsMeasured", r.roundsOk());
      m.put("deliveredMBpsMedian", r.mbps().median());
      m.put("deliveredMBpsMin", r.mbps().min());
      m.put("deliveredMBpsMax", r.mbps().max());
      m.put("cpuSecondsPerGBMedian", r.cpuSecondsPerGb());
      m.put("contextSwitchesPerMessageMedian", r.switchesPerMessage());
      m.put("latencyP50UsMedian", r.p50Micros());
      m.put("mbpsVsTlsJdkMedian", r.vsTls().median());
      m.put("mbpsVsTlsJdkMin", r.vsTls().min());
      m.put("mbpsVsTlsJdkMax", r.vsTls().max());
      m.put("mbpsVsPlainWriteMedian", r.vsPlain().median());
      m.put("mbpsVsPlainWriteMin", r.vsPlain().min());
      m.put("mbpsVsPlainWriteMax", r.vsPlain().max());
      m.put("efficiencyVsAeadBoundMedian", r.efficiency().median());
      m.put("efficiencyVsAeadBoundMin", r.efficiency().min());
      m.put("efficiencyVsAeadBoundMax", r.efficiency().max());
      out.add(m);
    }
    return out;
  }

  private static String spread(Spread s, String format) {
    if (Double.isNaN(s.median())) {
      return "–";
    }
    return String.format(Locale.ROOT, format, s.median())
        + " ["
        + String.format(Locale.ROOT, format, s.min())
        + "–"
        + String.format(Locale.ROOT, format, s.max())
        + "]";
  }

  private static String fixed(double v, String format) {
    return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, format, v);
  }
}
