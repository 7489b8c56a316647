package io.srdma.bench.transport;

/**
 * One transport at one message size: its throughput run, latency percentiles and CPU cost, or why
 * there are none.
 *
 * @param transport the transport's name
 * @param messageSize bytes per message
 * @param status {@code ok}, {@code unavailable} (cannot run here) or {@code failed}
 * @param reason why not ok; {@code null} when ok
 * @param throughput the measured throughput run; {@code null} unless ok
 * @param p50Micros one-way latency median, microseconds; NaN unless ok
 * @param p99Micros 99th percentile
 * @param p999Micros 99.9th percentile
 * @param maxMicros largest
 * @param latencySamples messages in the latency run
 * @param cpuSecondsPerGb process CPU seconds spent during the throughput run per 10^9 bytes
 *     delivered; NaN when the JVM cannot tell
 * @param contextSwitchesPerMessage context switches of the whole process (every thread, both
 *     endpoints) during the throughput run per message delivered; NaN where the OS cannot tell (see
 *     ContextSwitches)
 */
public record Measurement(
    String transport,
    int messageSize,
    String status,
    String reason,
    ThroughputResult throughput,
    double p50Micros,
    double p99Micros,
    double p999Micros,
    double maxMicros,
    long latencySamples,
    double cpuSecondsPerGb,
    double contextSwitchesPerMessage) {

  /** Status of a measured transport. */
  public static final String OK = "ok";

  /** Status of a transport that cannot run on this machine. */
  public static final String UNAVAILABLE = "unavailable";

  /** Status of a transport whose run failed. */
  public static final String FAILED = "failed";

  static Measurement notMeasured(String transport, int size, String status, String reason) {
    return new Measurement(
        transport,
        size,
        status,
        reason,
        null,
        Double.NaN,
        Double.NaN,
        Double.NaN,
        Double.NaN,
        0,
        Double.NaN,
        Double.NaN);
  }

  /** Whether it was measured. */
  public boolean ok() {
    return OK.equals(status);
  }

  /** Delivered MB/s, NaN unless ok. */
  public double deliveredMbPerSecond() {
    return ok() ? throughput.deliveredMbPerSecond() : Double.NaN;
  }
}
