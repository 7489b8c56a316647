package io.srdma.bench.policy;

import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Parsing and validating the 1,000 tenants x 10 roles policy (about 2.4 MB of YAML). Target: at
 * most 1 s.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 10)
@Fork(1)
@State(Scope.Benchmark)
public class PolicyLoadBenchmark {
  private byte[] yaml;
  private final PolicyLoader loader = new PolicyLoader();

  /** Generates the policy text once. */
  @Setup
  public void setUp() {
    yaml = LargePolicy.yaml(LargePolicy.TENANTS, LargePolicy.ROLES);
  }

  /** One full load: YAML parse, validation, Shiro permissions, lookups. */
  @Benchmark
  public Policy load() {
    return loader.parse("bench", yaml);
  }
}
