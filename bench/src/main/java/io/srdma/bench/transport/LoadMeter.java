package io.srdma.bench.transport;

import io.srdma.host.HostStats;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What a {@link LoadRun} counts as it goes: its unintended errors by kind, and the write latency of
 * the measured window (writes that complete inside it; none during the warm-up or the drain). Every
 * method may be called from any thread.
 */
final class LoadMeter {
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private final Recorder latency = new Recorder(3);
  private final AtomicBoolean measuring = new AtomicBoolean();

  void error(String kind) {
    errors.computeIfAbsent(kind, k -> new LongAdder()).increment();
  }

  void count(String kind, long n) {
    if (n > 0) {
      errors.computeIfAbsent(kind, k -> new LongAdder()).add(n);
    }
  }

  /** A write that started at {@code start} ({@link System#nanoTime}) completed now. */
  void written(long start) {
    if (measuring.get()) {
      latency.recordValue(Math.max(0, System.nanoTime() - start));
    }
  }

  /** Opens the measured window: latencies recorded before it are dropped. */
  void startMeasuring() {
    latency.reset();
    measuring.set(true);
  }

  /** Closes the measured window; the latencies recorded in it. */
  Histogram stopMeasuring() {
    Histogram h = latency.getIntervalHistogram();
    measuring.set(false);
    return h;
  }

  /** The host's error counters' growth from {@code base} to {@code last}, counted by kind. */
  void hostErrors(HostStats base, HostStats last, long intendedDenials, int sessions) {
    count("host:auth-failures", last.authFailures() - base.authFailures());
    count("host:rate-limited", last.rateLimited() - base.rateLimited());
    count("host:quota-refusals", last.quotaRefusals() - base.quotaRefusals());
    count("host:records-rejected", last.recordsRejected() - base.recordsRejected());
    count("host:remote-access-errors", last.remoteAccessErrors() - base.remoteAccessErrors());
    count("host:protocol-errors", last.protocolErrors() - base.protocolErrors());
    count("host:unexpected-denials", last.denials() - base.denials() - intendedDenials);
    count("host:sessions-lost", sessions - last.sessions());
  }

  /** The errors so far by kind, sorted. */
  Map<String, Long> byKind() {
    Map<String, Long> out = new TreeMap<>();
    errors.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
