package io.srdma.bench.transport;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * The bytes every transport moves: an 8-byte big-endian sequence number, then a fixed pseudo-random
 * pattern (so compression or zero pages cannot flatter anyone), and the checksum both sides keep
 * when verifying.
 */
public final class Payload {
  /** Smallest message: room for the sequence number. */
  public static final int MIN_SIZE = Long.BYTES;

  /** Stamp of the message that ends a run; it is not counted. */
  static final long END = -1L;

  /** Most bytes one coalesced unit (a sealed record, a plain WRITE, a TLS write) carries. */
  public static final int COALESCED_BYTES = 64 * 1024;

  /**
   * Messages of {@code size} bytes sent as one unit when {@code coalesce} were asked for: at most
   * {@link #COALESCED_BYTES} in all, and at least one.
   */
  public static int coalesced(int coalesce, int size) {
    return Math.max(1, Math.min(coalesce, COALESCED_BYTES / size));
  }

  private Payload() {}

  /** Fills {@code [offset, offset + size)} of {@code buffer} with the pattern for {@code size}. */
  static void fill(ByteBuffer buffer, int offset, int size) {
    SplittableRandom random = new SplittableRandom(0x5EC0DE ^ size);
    for (int i = 0; i < size; i++) {
      buffer.put(offset + i, (byte) random.nextInt(256));
    }
  }

  /** Fills a whole array with the pattern for its length. */
  static void fill(byte[] array) {
    fill(ByteBuffer.wrap(array), 0, array.length);
  }

  /** Writes {@code sequence} into the first 8 bytes of the message at {@code offset}. */
  static void stamp(ByteBuffer buffer, int offset, long sequence) {
    buffer.putLong(offset, sequence);
  }

  /** Writes {@code sequence} into the first 8 bytes of {@code array}. */
  static void stamp(byte[] array, long sequence) {
    stamp(array, 0, sequence);
  }

  /** Writes {@code sequence} into the 8 bytes of {@code array} from {@code offset}. */
  static void stamp(byte[] array, int offset, long sequence) {
    for (int i = 7; i >= 0; i--) {
      array[offset + i] = (byte) sequence;
      sequence >>>= 8;
    }
  }

  /**
   * Folds {@code [offset, offset + size)} of {@code view} into {@code crc}. {@code view} is a
   * private duplicate of the message buffer; its position and limit are changed.
   */
  static void checksum(CRC32C crc, ByteBuffer view, int offset, int size) {
    view.limit(offset + size).position(offset);
    crc.update(view);
  }

  /**
   * Reassembles fixed-size messages from a byte stream (the TLS transports) and delivers them:
   * checks sequence numbers, folds them into the checksum, notices the end message. Not thread
   * safe: one receiving thread.
   */
  static final class StreamReceiver {
    private final int size;
    private final boolean verify;
    private final CRC32C crc = new CRC32C();
    private final byte[] stampBytes = new byte[Long.BYTES];
    private int inMessage;
    private long stamp;
    private boolean endMessage;
    private long delivered;
    private long sequenceErrors;
    private long lastDeliveredNanos;
    private boolean ended;

    StreamReceiver(int size, boolean verify) {
      if (size < MIN_SIZE) {
        throw new IllegalArgumentException("message size below " + MIN_SIZE + ": " + size);
      }
      this.size = size;
      this.verify = verify;
    }

    /**
     * Consumes the bytes from position to limit of {@code chunk} (position moves to the limit).
     *
     * @return how many counted messages completed in this chunk
     */
    int consume(ByteBuffer chunk) {
      int completed = 0;
      while (chunk.hasRemaining()) {
        if (ended) {
          throw new IllegalStateException(
              chunk.remaining() + " bytes arrived after the end message");
        }
        if (inMessage < Long.BYTES) {
          byte b = chunk.get();
          stampBytes[inMessage++] = b;
          stamp = (stamp << 8) | (b & 0xFF);
          if (inMessage == Long.BYTES) {
            endMessage = stamp == END;
            if (verify && !endMessage) {
              crc.update(stampBytes, 0, Long.BYTES);
            }
          }
        } else {
          int n = Math.min(chunk.remaining(), size - inMessage);
          if (verify && !endMessage) {
            int limit = chunk.limit();
            chunk.limit(chunk.position() + n);
            crc.update(chunk);
            chunk.limit(limit);
          } else {
            chunk.position(chunk.position() + n);
          }
          inMessage += n;
        }
        if (inMessage == size) {
          if (endMessage) {
            ended = true;
          } else {
            if (stamp != delivered) {
              sequenceErrors++;
            }
            delivered++;
            completed++;
            lastDeliveredNanos = System.nanoTime();
          }
          inMessage = 0;
          stamp = 0;
        }
      }
      return completed;
    }

    boolean ended() {
      return ended;
    }

    long delivered() {
      return delivered;
    }

    long sequenceErrors() {
      return sequenceErrors;
    }

    long lastDeliveredNanos() {
      return lastDeliveredNanos;
    }

    long checksum() {
      return verify ? crc.getValue() : 0;
    }
  }
}
