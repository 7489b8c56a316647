package io.srdma.bench.channel;

import io.srdma.bench.keys.Schedules;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordOpener;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.KeySchedule;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The host's opening path with 1 and 2 opener threads, records already in registered memory: each
 * JMH thread plays one opener with its own session (key schedule, {@link RecordOpener} and so its
 * own {@code Cipher}), its own region of {@link #RECORDS} sealed records laid end to end and its
 * own plaintext buffer, and opens them round the ring, as an opener thread does after polling a
 * completion (nothing shared between threads: no hand-off, no lock). The score is records opened
 * per second summed over the threads; {@code twoOpeners / oneOpener} is the scaling (the aim is at
 * least 1.8 on two quiet cores). Replay protection is off, as in {@link RecordBenchmark}, because
 * the ring opens the same records again; the replay check is a few bit operations per record.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar OpenerScalingBenchmark -p size=4096
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class OpenerScalingBenchmark {
  /** Records in each opener's region. */
  static final int RECORDS = 64;

  private static final RecordBinding BINDING = RecordBinding.of(7, "acme", "kvcache");

  /** One opener thread's session, region and buffers. */
  @State(Scope.Thread)
  public static class Opener {
    /** Payload bytes per record. */
    @Param({"1024", "4096", "65536"})
    public int size;

    private KeySchedule sender;
    private KeySchedule receiver;
    private RecordOpener opener;
    private ByteBuffer region;
    private ByteBuffer plain;
    private int recordLength;
    private int next;

    /** A real key schedule per thread, {@link #RECORDS} records sealed into a direct region. */
    @Setup(Level.Trial)
    public void setUp() throws Exception {
      SecureRandom random = new SecureRandom();
      KeySchedule[] ends = Schedules.pair(random);
      sender = ends[0];
      receiver = ends[1];
      RecordSealer sealer = new RecordSealer(new SealingKeys(sender.sendKeys()), 64 * 1024);
      opener = RecordOpener.forSchedule(receiver, 64 * 1024, false);
      ByteBuffer payload = ByteBuffer.allocate(size);
      random.nextBytes(payload.array());
      recordLength = size + RecordSealer.OVERHEAD;
      region = ByteBuffer.allocateDirect(recordLength * RECORDS);
      for (int i = 0; i < RECORDS; i++) {
        int at = i * recordLength;
        if (sealer.seal(payload, BINDING, at, region, at) != recordLength) {
          throw new IllegalStateException("record length changed");
        }
      }
      plain = ByteBuffer.allocate(size);
    }

    /** Zeroizes the keys. */
    @TearDown(Level.Trial)
    public void tearDown() {
      sender.close();
      receiver.close();
    }

    OpenResult openNext() {
      int at = next * recordLength;
      next = next == RECORDS - 1 ? 0 : next + 1;
      plain.clear();
      OpenResult r = opener.open(region, at, recordLength, BINDING, at, plain);
      if (r != OpenResult.OK) {
        throw new IllegalStateException("record at " + at + " did not open: " + r);
      }
      return r;
    }
  }

  /** One opener thread: every session's records on one core (the host before opener threads). */
  @Benchmark
  @Threads(1)
  public OpenResult oneOpener(Opener o) {
    return o.openNext();
  }

  /** Two opener threads, each with its own sessions' records. */
  @Benchmark
  @Threads(2)
  public OpenResult twoOpeners(Opener o) {
    return o.openNext();
  }
}
