package io.srdma.bench.policy;

import io.srdma.policy.Decision;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Operation;
import io.srdma.policy.PolicyLoader;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One grant decision against a policy of 1,000 tenants x 10 roles: random tenant, random peer (half
 * matched by patterns), allowed and denied requests. Target: median at most 2 us.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class PolicyDecisionBenchmark {
  private static final int REQUESTS = 4096;
  private static final Duration TTL = Duration.ofMinutes(1);
  private static final Set<Operation> WRITE = EnumSet.of(Operation.WRITE);
  private static final Set<Operation> READ = EnumSet.of(Operation.READ);

  private GrantAuthority authority;
  private final String[] identities = new String[REQUESTS];
  private final String[] tenants = new String[REQUESTS];
  private final String[] regions = new String[REQUESTS];
  private int next;

  /** Loads the generated policy and precomputes random requests. */
  @Setup(Level.Trial)
  public void setUp() {
    authority =
        new GrantAuthority(
            new PolicyLoader()
                .parse("bench", LargePolicy.yaml(LargePolicy.TENANTS, LargePolicy.ROLES)));
    SplittableRandom rnd = new SplittableRandom(42);
    String[] names = {"kvcache", "params", "features", "scratch"};
    for (int i = 0; i < REQUESTS; i++) {
      int t = rnd.nextInt(LargePolicy.TENANTS);
      identities[i] = LargePolicy.identity(t, rnd.nextInt(LargePolicy.ROLES));
      tenants[i] = "t" + t;
      regions[i] = names[rnd.nextInt(names.length)];
    }
  }

  /** Read of a random region: allowed for most roles. */
  @Benchmark
  public Decision decideRead() {
    int i = next++ & (REQUESTS - 1);
    return authority.decide(identities[i], tenants[i], regions[i], READ, 4096, 65536, TTL);
  }

  /** Write of a random region: allowed or denied depending on the role. */
  @Benchmark
  public Decision decideWrite() {
    int i = next++ & (REQUESTS - 1);
    return authority.decide(identities[i], tenants[i], regions[i], WRITE, 4096, 65536, TTL);
  }
}
