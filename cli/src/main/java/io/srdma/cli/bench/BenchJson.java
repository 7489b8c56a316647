package io.srdma.cli.bench;

import io.srdma.bench.transport.BenchRunner;
import io.srdma.bench.transport.CpuModel;
import io.srdma.bench.transport.CpuSplit;
import io.srdma.channel.record.AeadPlan;
import io.srdma.channel.record.AeadRates;
import io.srdma.channel.record.AeadSelection;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The parts of {@code srdma bench --json} this command writes (the results are {@link
 * io.srdma.bench.transport.Report#json}'s): the header and the comparison's config. Keys and their
 * order are read by tooling; keep them.
 */
final class BenchJson {
  private BenchJson() {}

  /** Tool, format, start, command line, machine, data-path AEAD and negotiated parameters. */
  static Map<String, Object> header(
      Instant started,
      String command,
      AeadSelection.Choice cipher,
      Map<String, String> negotiated) {
    Map<String, Object> h = new LinkedHashMap<>();
    h.put("tool", "srdma bench");
    h.put("formatVersion", 1);
    h.put("startedAt", started.toString());
    h.put("command", command);
    Map<String, Object> machine = new LinkedHashMap<>();
    machine.put("cpus", Runtime.getRuntime().availableProcessors());
    CpuModel cpu = CpuModel.read();
    machine.put("cpuModel", cpu.name());
    machine.put("cpuFamily", cpu.family());
    machine.put("cpuModelNumber", cpu.model());
    machine.put("cpuFeatures", new ArrayList<Object>(cpu.features()));
    machine.put("java", Runtime.version().toString());
    machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    machine.put("loadAverage", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    h.put("machine", machine);
    h.put("aead", aead(cipher));
    h.put("negotiated", negotiated);
    return h;
  }

  /** The data-path AEAD: which, why, and the start-up rate check of every candidate. */
  static Map<String, Object> aead(AeadSelection.Choice cipher) {
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
    a.put("ipsecMbUnavailable", cipher.ipsecMbUnavailable());
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

  /** The comparison's settings, and what its latency, CPU and switches figures mean. */
  static Map<String, Object> config(Comparison run) {
    BenchRunner.Config c = run.config();
    CpuSplit cpuSplit = run.cpuSplit();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("sizes", new ArrayList<Object>(c.sizes()));
    m.put("durationMs", c.duration().toMillis());
    m.put("warmupMs", c.warmup().toMillis());
    m.put("transports", new ArrayList<Object>(c.transports()));
    m.put("provider", run.provider());
    m.put("depth", c.depth().toString());
    Map<String, Object> bySize = new LinkedHashMap<>();
    for (int size : c.sizes()) {
      bySize.put(Integer.toString(size), c.depth().forSize(size));
    }
    m.put("depthBySize", bySize);
    m.put("coalesce", run.coalesce());
    m.put("rounds", run.rounds());
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
}
