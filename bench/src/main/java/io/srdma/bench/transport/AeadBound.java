package io.srdma.bench.transport;

import io.srdma.channel.SealedLayout;
import io.srdma.channel.record.AeadSelection;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordOpener;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.Direction;
import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;

/**
 * The single-core bound of a sealed transport: how fast one thread seals, and opens, messages of a
 * given size with the data path's AEAD (the process's {@link AeadSelection}) through the real
 * {@link RecordSealer} and {@link RecordOpener}: a heap payload sealed into a direct (registered)
 * buffer as the sealed writer seals a caller's buffer (the range seal: straight from its array, no
 * copy first, no view), records opened from it into a heap buffer, messages above {@value
 * SealedLayout#DEFAULT_MAX_RECORD_PAYLOAD} bytes cut into records of that size as the sealed
 * transport cuts them. A sealed message is sealed once by the writer's thread and opened once by
 * the host's, so {@code min(seal, open)} MB/s is the most one writer and one host thread can
 * deliver; {@link #efficiency} is a result's delivered MB/s over that.
 *
 * <p>Measured on the calling thread; uses a throwaway key. Not thread-safe; one per bench.
 */
public final class AeadBound {
  /**
   * Seal and open rates at one message size.
   *
   * @param messageSize bytes per message
   * @param sealMBps message bytes sealed per second, 10^6
   * @param openMBps message bytes opened per second, 10^6
   */
  public record Rate(int messageSize, double sealMBps, double openMBps) {
    /** The mean of two measurements of one size, each of equally long slices. */
    static Rate mean(Rate a, Rate b) {
      if (a.messageSize != b.messageSize) {
        throw new IllegalArgumentException(a.messageSize + " B and " + b.messageSize + " B");
      }
      return new Rate(a.messageSize, (a.sealMBps + b.sealMBps) / 2, (a.openMBps + b.openMBps) / 2);
    }

    /** {@code min(seal, open)}: the most one sealing and one opening thread can deliver. */
    double boundMBps() {
      return Math.min(sealMBps, openMBps);
    }
  }

  private static final RecordBinding BINDING = RecordBinding.of(1, "bench", "aead-bound");
  private static final int RECORD = SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD;

  private AeadBound() {}

  /**
   * The provider of the process's {@link AeadSelection} plan that seals the records of messages of
   * {@code size} bytes (records of at most {@value SealedLayout#DEFAULT_MAX_RECORD_PAYLOAD} bytes).
   */
  public static String providerFor(int size) {
    return AeadSelection.current().plan().forPayload(Math.min(size, RECORD)).name();
  }

  /**
   * Seals for {@code slice}, then opens for {@code slice}, messages of {@code size} bytes.
   *
   * @param size bytes per message
   * @param slice how long each direction is measured
   */
  public static Rate measure(int size, Duration slice) {
    byte[] key = new byte[DirectionKeys.KEY_LENGTH];
    SecureRandom random = new SecureRandom();
    random.nextBytes(key);
    try (DirectionKeys keys =
        DirectionKeys.fromMaterial(Direction.INITIATOR_TO_RESPONDER, 0, key, new byte[4])) {
      Arrays.fill(key, (byte) 0);
      int record = Math.min(size, RECORD);
      int records = (size + RECORD - 1) / RECORD;
      RecordSealer sealer = new RecordSealer(new SealingKeys(keys), RECORD);
      RecordOpener opener = new RecordOpener(e -> keys, RECORD, false);
      ByteBuffer payload = ByteBuffer.allocate(record);
      random.nextBytes(payload.array());
      ByteBuffer registered = ByteBuffer.allocateDirect(record + RecordSealer.OVERHEAD);
      ByteBuffer opened = ByteBuffer.allocate(record);
      long sliceNanos = slice.toNanos();
      long sealed = 0;
      long start = System.nanoTime();
      long now;
      do {
        for (int r = 0; r < records; r++) {
          int n = r < records - 1 ? record : size - r * RECORD;
          if (sealer.seal(payload, 0, n, BINDING, 0, registered, 0) < 0) {
            throw new IllegalStateException("the bound's sealer refused a record");
          }
        }
        sealed++;
        now = System.nanoTime();
      } while (now - start < sliceNanos);
      double seal = sealed * (double) size * 1e3 / (now - start);
      int length = sealer.seal(payload, 0, record, BINDING, 0, registered, 0);
      long openedMessages = 0;
      start = System.nanoTime();
      do {
        for (int r = 0; r < records; r++) {
          opened.clear();
          if (opener.open(registered, 0, length, BINDING, 0, opened) != OpenResult.OK) {
            throw new IllegalStateException("the bound's opener refused its record");
          }
        }
        openedMessages++;
        now = System.nanoTime();
      } while (now - start < sliceNanos);
      double open = openedMessages * (double) size * 1e3 / (now - start);
      return new Rate(size, seal, open);
    }
  }

  /**
   * How long each direction is measured per size per round, in all: a sixth of a run, 100 to 500 ms
   * (measured in two halves around the run, {@link BenchRunner#boundProbe}).
   */
  public static Duration slice(Duration run) {
    Duration d = run.dividedBy(6);
    Duration min = Duration.ofMillis(100);
    Duration max = Duration.ofMillis(500);
    return d.compareTo(min) < 0 ? min : d.compareTo(max) > 0 ? max : d;
  }

  /**
   * {@code m}'s delivered MB/s over {@code bound}'s {@link Rate#boundMBps}; NaN when either is
   * missing.
   */
  static double efficiency(Measurement m, Rate bound) {
    if (bound == null || !m.ok() || !(bound.boundMBps() > 0)) {
      return Double.NaN;
    }
    return m.deliveredMbPerSecond() / bound.boundMBps();
  }
}
