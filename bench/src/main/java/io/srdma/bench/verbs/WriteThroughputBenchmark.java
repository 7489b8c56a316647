package io.srdma.bench.verbs;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Streaming throughput, messages per second (multiply by size for bytes): soft-provider RDMA WRITE
 * (32 per batch, last signaled, at most two batches outstanding) against a plain NIO socket stream
 * of the same message size. Same run, same machine. {@code soft} posts each batch as one post list
 * (one doorbell, one gathering write), {@code soft-single} posts its messages one at a time: the
 * difference is what doorbell batching saves per message.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class WriteThroughputBenchmark {
  @Param({"soft", "soft-single", "socket"})
  public String transport;

  @Param({"64", "4096", "65536", "1048576"})
  public int size;

  private Transport t;

  /** Opens the transport. */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
    t = Transport.open(transport, size, false);
  }

  /** Closes the transport. */
  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    t.close();
  }

  /** One batch of messages. */
  @Benchmark
  @OperationsPerInvocation(Transport.BATCH)
  public void stream() throws Exception {
    t.streamBatch();
  }
}
