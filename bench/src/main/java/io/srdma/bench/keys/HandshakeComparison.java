package io.srdma.bench.keys;

import java.util.Arrays;
import java.util.Locale;

/**
 * The three variants of {@link HandshakeBenchmark}, interleaved round by round so that background
 * load on a shared machine hits all of them alike; prints medians and the ratios against the bare
 * JDK handshake.
 *
 * <pre>java -cp bench/target/benchmarks.jar io.srdma.bench.keys.HandshakeComparison [ROUNDS]</pre>
 */
public final class HandshakeComparison {
  private HandshakeComparison() {}

  /** Runs 200 warm-up rounds, then ROUNDS (default 1000) measured rounds. */
  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    HandshakeBenchmark b = new HandshakeBenchmark();
    b.setUp();
    try {
      String[] names = {"jdkMutualTls13", "srdmaMutualTls13", "srdmaMutualTls13WithKeyNegotiation"};
      long[][] samples = new long[3][rounds];
      for (int r = -200; r < rounds; r++) {
        for (int k = 0; k < 3; k++) {
          int v = Math.floorMod(r + k, 3); // rotate the order every round
          long t0 = System.nanoTime();
          switch (v) {
            case 0:
              b.jdkMutualTls13();
              break;
            case 1:
              b.srdmaMutualTls13();
              break;
            default:
              b.srdmaMutualTls13WithKeyNegotiation();
              break;
          }
          long t = System.nanoTime() - t0;
          if (r >= 0) {
            samples[v][r] = t;
          }
        }
      }
      double base = 0;
      System.out.printf(
          Locale.ROOT,
          "%-36s %10s %10s %10s %8s%n",
          "variant",
          "p50 us",
          "p10 us",
          "p90 us",
          "ratio");
      for (int v = 0; v < 3; v++) {
        long[] s = samples[v];
        Arrays.sort(s);
        double p50 = s[s.length / 2] / 1000.0;
        if (v == 0) {
          base = p50;
        }
        System.out.printf(
            Locale.ROOT,
            "%-36s %10.0f %10.0f %10.0f %8.2f%n",
            names[v],
            p50,
            s[s.length / 10] / 1000.0,
            s[s.length * 9 / 10] / 1000.0,
            p50 / base);
      }
    } finally {
      b.tearDown();
    }
  }
}
