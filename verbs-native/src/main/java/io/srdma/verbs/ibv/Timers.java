package io.srdma.verbs.ibv;

import java.time.Duration;

/**
 * Encodes {@link io.srdma.verbs.DeviceOptions}' budgets into the InfiniBand QP attributes: the
 * local ACK timeout exponent with its retry count, and the RNR NAK timer with its retry count.
 */
final class Timers {
  /** Retries after the first try: transport and RNR (7 would mean "forever" for RNR). */
  static final int RETRIES = 6;

  /** IBTA table of the RNR NAK timer codes, in microseconds; code 0 is the longest. */
  private static final double[] RNR_MICROS = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120,
    7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520
  };

  private Timers() {}

  /**
   * The ACK timeout exponent t (4.096 µs × 2^t per try) so that all tries take about {@code total}.
   */
  static int ackTimeoutExponent(Duration total) {
    double perTryMicros = total.toNanos() / 1000.0 / (RETRIES + 1);
    int t = (int) Math.round(Math.log(perTryMicros / 4.096) / Math.log(2));
    return Math.max(1, Math.min(31, t));
  }

  /** The RNR timer code whose delay is closest to {@code total} split over all tries. */
  static int rnrTimerCode(Duration total) {
    double perTry = total.toNanos() / 1000.0 / (RETRIES + 1);
    int best = 1;
    for (int code = 1; code < RNR_MICROS.length; code++) {
      if (Math.abs(RNR_MICROS[code] - perTry) < Math.abs(RNR_MICROS[best] - perTry)) {
        best = code;
      }
    }
    return best;
  }
}
