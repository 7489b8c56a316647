package io.srdma.bench.verbs;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Round trip: one signaled soft-provider RDMA WRITE until its completion, against a plain NIO
 * socket ping-pong (write, peer echoes, read) of the same size.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class WriteLatencyBenchmark {
  @Param({"soft", "socket"})
  public String transport;

  @Param({"64", "4096", "65536", "1048576"})
  public int size;

  private Transport t;

  /** Opens the transport. */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
    t = Transport.open(transport, size, true);
  }

  /** Closes the transport. */
  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    t.close();
  }

  /** One round trip. */
  @Benchmark
  public void roundTrip() throws Exception {
    t.roundTrip();
  }
}
