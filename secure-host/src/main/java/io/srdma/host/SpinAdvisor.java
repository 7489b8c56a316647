package io.srdma.host;

/**
 * Whether a poller that just ran out of work should spin before it waits: yes while most recent
 * idle gaps (from running dry to the next work) were short enough for a spin to bridge, no while
 * they were not. A spin that usually ends in a wait anyway only burns a core that the threads
 * producing the work (on a small machine, the same cores) could use: measured on 2 vCPUs, an opener
 * spinning 50 µs into gaps of 200–500 µs (a writer's bursts of large records) cost 8 % of all CPU
 * and 10–15 % of 64 KiB throughput, while on one-message-at-a-time traffic (gaps of 20–50 µs) the
 * spin saves a wake-up that otherwise doubles a 64 B message's latency on a VM.
 *
 * <p>A gap counts as one a spin bridges when it is at most {@link #BRIDGE_FACTOR} times the spin: a
 * poller that did not spin measures its wake-up too, and a gap just past the spin still means the
 * traffic is close to it. The verdict follows an exponentially weighted share of such gaps (weight
 * 1/16, starting at "spin"), with spinning kept while the share is at least one half.
 *
 * <p>Not thread-safe: one instance per polling thread. Allocates nothing.
 */
final class SpinAdvisor {
  /** A gap up to this multiple of the spin counts as one a spin bridges. */
  static final int BRIDGE_FACTOR = 3;

  private final long bridgeNanos;
  private double bridgedShare = 1.0;

  /**
   * @param spinNanos how long the poller spins when it does (> 0)
   * @throws IllegalArgumentException if {@code spinNanos <= 0}
   */
  SpinAdvisor(long spinNanos) {
    if (spinNanos <= 0) {
      throw new IllegalArgumentException("spin must be positive: " + spinNanos + " ns");
    }
    this.bridgeNanos = spinNanos * BRIDGE_FACTOR;
  }

  /** Records one idle gap: from the poll that found nothing to the one that found work. */
  void gapEnded(long gapNanos) {
    double bridged = gapNanos <= bridgeNanos ? 1.0 : 0.0;
    bridgedShare += (bridged - bridgedShare) * 0.0625;
  }

  /** True if the poller should spin now that it ran dry. */
  boolean shouldSpin() {
    return bridgedShare >= 0.5;
  }

  /** The weighted share of recent gaps a spin bridged (0..1), for tests and diagnostics. */
  double bridgedShare() {
    return bridgedShare;
  }
}
