package io.srdma.bench.policy;

import io.srdma.policy.Decision;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Operation;
import io.srdma.policy.PolicyLoader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The same work as {@link PolicyDecisionBenchmark} and {@link PolicyLoadBenchmark}, timed by the
 * thread's CPU time as well as the wall clock, so that time spent waiting for a CPU on a shared
 * machine does not count. Prints the median of each.
 *
 * <pre>java -cp bench/target/benchmarks.jar io.srdma.bench.policy.PolicyCpuTime [ROUNDS]</pre>
 */
public final class PolicyCpuTime {
  private static final int REQUESTS = 4096;
  private static final int BATCH = 1_000_000;

  private PolicyCpuTime() {}

  /**
   * Runs the measurement.
   *
   * @param args optional number of measured rounds (default 10)
   */
  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    byte[] yaml = LargePolicy.yaml(LargePolicy.TENANTS, LargePolicy.ROLES);
    PolicyLoader loader = new PolicyLoader();
    long[] loadCpu = new long[rounds];
    long[] loadWall = new long[rounds];
    for (int i = -3; i < rounds; i++) {
      long c = mx.getCurrentThreadCpuTime();
      long w = System.nanoTime();
      loader.parse("bench", yaml);
      if (i >= 0) {
        loadCpu[i] = mx.getCurrentThreadCpuTime() - c;
        loadWall[i] = System.nanoTime() - w;
      }
    }
    GrantAuthority authority = new GrantAuthority(loader.parse("bench", yaml));
    String[] ids = new String[REQUESTS];
    String[] tenants = new String[REQUESTS];
    String[] regions = new String[REQUESTS];
    SplittableRandom rnd = new SplittableRandom(42);
    String[] names = {"kvcache", "params", "features", "scratch"};
    for (int i = 0; i < REQUESTS; i++) {
      int t = rnd.nextInt(LargePolicy.TENANTS);
      ids[i] = LargePolicy.identity(t, rnd.nextInt(LargePolicy.ROLES));
      tenants[i] = "t" + t;
      regions[i] = names[rnd.nextInt(names.length)];
    }
    Set<Operation> write = EnumSet.of(Operation.WRITE);
    Duration ttl = Duration.ofMinutes(1);
    long allowed = 0;
    double[] cpu = new double[rounds];
    double[] wall = new double[rounds];
    for (int r = -3; r < rounds; r++) {
      long c = mx.getCurrentThreadCpuTime();
      long w = System.nanoTime();
      for (int k = 0; k < BATCH; k++) {
        int i = k & (REQUESTS - 1);
        Decision d = authority.decide(ids[i], tenants[i], regions[i], write, 4096, 65536, ttl);
        allowed += d.allowed() ? 1 : 0;
      }
      if (r >= 0) {
        cpu[r] = (mx.getCurrentThreadCpuTime() - c) / (double) BATCH;
        wall[r] = (System.nanoTime() - w) / (double) BATCH;
      }
    }
    System.out.printf(
        "load of 1,000 tenants x 10 roles (%d bytes): median cpu %d ms, wall %d ms (%d rounds)%n",
        yaml.length, median(loadCpu) / 1_000_000, median(loadWall) / 1_000_000, rounds);
    System.out.printf(
        "decision (write, random tenant/peer/region, %.0f%% allowed): median cpu %.0f ns,"
            + " wall %.0f ns (%d rounds of %,d)%n",
        100.0 * allowed / ((rounds + 3) * (double) BATCH),
        median(cpu),
        median(wall),
        rounds,
        BATCH);
  }

  private static long median(long[] v) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
