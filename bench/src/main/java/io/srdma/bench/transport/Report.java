package io.srdma.bench.transport;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntFunction;

/** The tables on stdout and the JSON file. */
public final class Report {
  /** JSON keys of one result, in order; tests check every one is present. */
  public static final List<String> RESULT_FIELDS =
      List.of(
          "round",
          "transport",
          "messageSize",
          "status",
          "reason",
          "messagesSent",
          "messagesDelivered",
          "bytesDelivered",
          "deliveredSeconds",
          "deliveredMBps",
          "messagesPerSecond",
          "writesCompleted",
          "writeCompletionMBps",
          "latencyP50Us",
          "latencyP99Us",
          "latencyP999Us",
          "latencyMaxUs",
          "latencySamples",
          "cpuSecondsPerGB",
          "contextSwitchesPerMessage",
          "mbpsVsTlsJdk",
          "mbpsVsPlainWrite",
          "cpuPerGBVsTlsJdk",
          "cpuPerGBVsPlainWrite",
          "p50VsTlsJdk",
          "p50VsPlainWrite",
          "aeadProvider",
          "aeadSealMBps",
          "aeadOpenMBps",
          "aeadBoundMBps",
          "efficiencyVsAeadBound");

  /** The fields of {@link #RESULT_FIELDS} set for sealed results only (null for the others). */
  public static final List<String> AEAD_FIELDS =
      List.of(
          "aeadProvider", "aeadSealMBps", "aeadOpenMBps", "aeadBoundMBps", "efficiencyVsAeadBound");

  private Report() {}

  /** 64 B, 4 KiB, 1 MiB, 10 kB: the size grammar of {@code --sizes} (docs/units.md). */
  static String size(int bytes) {
    return io.srdma.policy.Units.formatSize(bytes);
  }

  /** 3 s, 250 ms, 1.5 s. */
  public static String duration(java.time.Duration d) {
    long ms = d.toMillis();
    if (ms % 1000 == 0) {
      return ms / 1000 + " s";
    }
    return ms < 1000 ? ms + " ms" : String.format(Locale.ROOT, "%.3f s", ms / 1e3);
  }

  /** One Markdown table per size. */
  public static void printTables(PrintWriter out, List<Integer> sizes, List<Measurement> all) {
    for (int size : sizes) {
      out.printf(Locale.ROOT, "%n### %s messages%n%n", size(size));
      out.println(
          "| transport | MB/s delivered | msg/s | write-compl. MB/s | p50 µs | p99 µs | p99.9 µs"
              + " | CPU s/GB | switches/msg | MB/s vs tls-jdk | MB/s vs plain-write |");
      out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
      for (Measurement m : ofSize(all, size)) {
        if (!m.ok()) {
          out.printf(Locale.ROOT, "| %s | %s: %s |%n", m.transport(), m.status(), oneLine(m));
          continue;
        }
        ThroughputResult t = m.throughput();
        out.printf(
            Locale.ROOT,
            "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
            m.transport(),
            fixed(t.deliveredMbPerSecond(), 1),
            grouped(t.deliveredMessagesPerSecond()),
            fixed(t.writeCompletionMbPerSecond(), 1),
            fixed(m.p50Micros(), 1),
            fixed(m.p99Micros(), 1),
            fixed(m.p999Micros(), 1),
            fixed(m.cpuSecondsPerGb(), 2),
            fixed(m.contextSwitchesPerMessage(), 3),
            ratio(ratio(m, all, Transports.TLS_BASELINE, Measurement::deliveredMbPerSecond)),
            ratio(ratio(m, all, Transports.RDMA_BASELINE, Measurement::deliveredMbPerSecond)));
      }
    }
    out.flush();
  }

  /**
   * One line naming the cipher each side of the comparison ran: what every TLS transport negotiated
   * (Netty's BoringSSL picks its own TLS 1.3 suite: AES-128-GCM where the CPU has AES instructions)
   * beside the sealed path's AES-256-GCM. Prints nothing when no transport negotiated anything.
   */
  public static void printNegotiated(
      PrintWriter out, Map<String, String> negotiated, boolean sealed, String aead) {
    if (negotiated.isEmpty()) {
      return;
    }
    List<String> each = new ArrayList<>();
    negotiated.forEach((name, suite) -> each.add("`" + name + "` " + suite));
    if (sealed) {
      each.add("`sealed` AES-256-GCM (" + aead + ")");
    }
    out.printf(Locale.ROOT, "%nCiphers: %s.%n", String.join(", ", each));
    out.flush();
  }

  /**
   * The AEAD bound of one round ({@link AeadBound}): per size, the single-core seal and open rates
   * and each sealed result's efficiency against {@code min(seal, open)}.
   */
  public static void printBounds(
      PrintWriter out,
      List<Integer> sizes,
      List<Measurement> all,
      Map<Integer, AeadBound.Rate> bounds,
      String aead) {
    if (bounds.isEmpty()) {
      return;
    }
    out.printf(
        Locale.ROOT,
        "%n### AEAD bound: %s on one core (RecordSealer / RecordOpener);"
            + " efficiency = sealed MB/s delivered / min(seal, open)%n%n",
        aead);
    out.println(
        "| size | sealed as records of | seal MB/s | open MB/s | sealed MB/s delivered | efficiency |");
    out.println("|---|---:|---:|---:|---:|---:|");
    for (int size : sizes) {
      AeadBound.Rate b = bounds.get(size);
      if (b == null) {
        continue;
      }
      Measurement sealed = sealedAt(all, size);
      double eff = sealed == null ? Double.NaN : AeadBound.efficiency(sealed, b);
      out.printf(
          Locale.ROOT,
          "| %s | %s | %s | %s | %s | %s |%n",
          size(size),
          size(Math.min(b.messageSize(), Payload.COALESCED_BYTES)),
          fixed(b.sealMBps(), 1),
          fixed(b.openMBps(), 1),
          sealed == null ? "–" : fixed(sealed.deliveredMbPerSecond(), 1),
          Double.isNaN(eff) ? "–" : String.format(Locale.ROOT, "%.0f %%", eff * 100));
    }
    out.flush();
  }

  /** Whether {@code transport} seals its messages, so that the AEAD bound applies to it. */
  public static boolean sealed(String transport) {
    return SealedTransport.NAME.equals(transport);
  }

  private static Measurement sealedAt(List<Measurement> all, int size) {
    for (Measurement m : all) {
      if (sealed(m.transport()) && m.messageSize() == size) {
        return m;
      }
    }
    return null;
  }

  private static String oneLine(Measurement m) {
    String r = String.valueOf(m.reason()).replace('\n', ' ').replace('|', '/');
    return r.length() > 200 ? r.substring(0, 200) + "..." : r;
  }

  private static List<Measurement> ofSize(List<Measurement> all, int size) {
    List<Measurement> out = new ArrayList<>();
    for (Measurement m : all) {
      if (m.messageSize() == size) {
        out.add(m);
      }
    }
    return out;
  }

  /** A value of {@code m} divided by the same value of {@code baseline} at the same size. */
  static double ratio(
      Measurement m,
      List<Measurement> all,
      String baseline,
      java.util.function.ToDoubleFunction<Measurement> value) {
    for (Measurement b : all) {
      if (b.transport().equals(baseline) && b.messageSize() == m.messageSize() && b.ok()) {
        double v = value.applyAsDouble(b);
        return m.ok() && v > 0 ? value.applyAsDouble(m) / v : Double.NaN;
      }
    }
    return Double.NaN;
  }

  private static String ratio(double r) {
    return Double.isNaN(r) ? "–" : String.format(Locale.ROOT, "%.2fx", r);
  }

  private static String fixed(double v, int decimals) {
    return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,." + decimals + "f", v);
  }

  private static String grouped(double v) {
    return String.format(Locale.ROOT, "%,.0f", v);
  }

  /**
   * The whole run as JSON: {@code {"tool", "startedAt", "command", "machine", "config", "results",
   * "summary"}}; each result names the round it was measured in (from 1), and its ratios are to the
   * baselines of that round; {@code summary} (empty for one round) holds {@link RoundSummary#json}
   * rows.
   */
  public static String json(
      Map<String, Object> header,
      Map<String, Object> config,
      List<List<Measurement>> rounds,
      List<Object> summary) {
    return json(header, config, rounds, List.of(), size -> null, summary);
  }

  /**
   * As {@link #json(Map, Map, List, List)}, with each sealed result's AEAD bound of its round
   * ({@code bounds}, one map per round, size to rate) and the name of the provider that sealed its
   * records ({@code aead}: message size to name, see {@link AeadBound#providerFor}).
   */
  public static String json(
      Map<String, Object> header,
      Map<String, Object> config,
      List<List<Measurement>> rounds,
      List<Map<Integer, AeadBound.Rate>> bounds,
      IntFunction<String> aead,
      List<Object> summary) {
    Map<String, Object> root = new LinkedHashMap<>(header);
    root.put("config", config);
    List<Object> results = new ArrayList<>();
    for (int r = 0; r < rounds.size(); r++) {
      for (Measurement m : rounds.get(r)) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("round", r + 1);
        one.putAll(result(m, rounds.get(r)));
        AeadBound.Rate b =
            sealed(m.transport()) && r < bounds.size() ? bounds.get(r).get(m.messageSize()) : null;
        one.put("aeadProvider", b == null ? null : aead.apply(m.messageSize()));
        one.put("aeadSealMBps", b == null ? null : b.sealMBps());
        one.put("aeadOpenMBps", b == null ? null : b.openMBps());
        one.put("aeadBoundMBps", b == null ? null : b.boundMBps());
        one.put("efficiencyVsAeadBound", b == null ? null : AeadBound.efficiency(m, b));
        results.add(one);
      }
    }
    root.put("results", results);
    root.put("summary", summary);
    StringBuilder sb = new StringBuilder();
    write(sb, root, "");
    return sb.append('\n').toString();
  }

  /** Any tree of maps, lists, strings, numbers, booleans and nulls as JSON (NaN as null). */
  public static String json(Map<String, Object> root) {
    StringBuilder sb = new StringBuilder();
    write(sb, root, "");
    return sb.append('\n').toString();
  }

  private static Map<String, Object> result(Measurement m, List<Measurement> all) {
    Map<String, Object> r = new LinkedHashMap<>();
    ThroughputResult t = m.throughput();
    r.put("transport", m.transport());
    r.put("messageSize", m.messageSize());
    r.put("status", m.status());
    r.put("reason", m.reason());
    r.put("messagesSent", t == null ? null : t.messagesSent());
    r.put("messagesDelivered", t == null ? null : t.messagesDelivered());
    r.put("bytesDelivered", t == null ? null : t.bytesDelivered());
    r.put("deliveredSeconds", t == null ? null : t.deliveredNanos() / 1e9);
    r.put("deliveredMBps", t == null ? null : t.deliveredMbPerSecond());
    r.put("messagesPerSecond", t == null ? null : t.deliveredMessagesPerSecond());
    r.put("writesCompleted", t == null ? null : t.writesCompleted());
    r.put("writeCompletionMBps", t == null ? null : t.writeCompletionMbPerSecond());
    r.put("latencyP50Us", m.p50Micros());
    r.put("latencyP99Us", m.p99Micros());
    r.put("latencyP999Us", m.p999Micros());
    r.put("latencyMaxUs", m.maxMicros());
    r.put("latencySamples", m.latencySamples());
    r.put("cpuSecondsPerGB", m.cpuSecondsPerGb());
    r.put("contextSwitchesPerMessage", m.contextSwitchesPerMessage());
    r.put(
        "mbpsVsTlsJdk", ratio(m, all, Transports.TLS_BASELINE, Measurement::deliveredMbPerSecond));
    r.put(
        "mbpsVsPlainWrite",
        ratio(m, all, Transports.RDMA_BASELINE, Measurement::deliveredMbPerSecond));
    r.put("cpuPerGBVsTlsJdk", ratio(m, all, Transports.TLS_BASELINE, Measurement::cpuSecondsPerGb));
    r.put(
        "cpuPerGBVsPlainWrite",
        ratio(m, all, Transports.RDMA_BASELINE, Measurement::cpuSecondsPerGb));
    r.put("p50VsTlsJdk", ratio(m, all, Transports.TLS_BASELINE, Measurement::p50Micros));
    r.put("p50VsPlainWrite", ratio(m, all, Transports.RDMA_BASELINE, Measurement::p50Micros));
    return r;
  }

  /** Minimal JSON writer: maps, lists, strings, numbers (NaN → null), booleans, null. */
  private static void write(StringBuilder sb, Object v, String indent) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Map<?, ?> map) {
      String inner = indent + "  ";
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        sb.append(first ? "\n" : ",\n").append(inner);
        first = false;
        string(sb, String.valueOf(e.getKey()));
        sb.append(": ");
        write(sb, e.getValue(), inner);
      }
      sb.append(first ? "}" : "\n" + indent + "}");
    } else if (v instanceof List<?> list) {
      String inner = indent + "  ";
      sb.append('[');
      boolean first = true;
      for (Object o : list) {
        sb.append(first ? "\n" : ",\n").append(inner);
        first = false;
        write(sb, o, inner);
      }
      sb.append(first ? "]" : "\n" + indent + "]");
    } else if (v instanceof Double d) {
      sb.append(d.isNaN() || d.isInfinite() ? "null" : d.toString());
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else {
      string(sb, v.toString());
    }
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
