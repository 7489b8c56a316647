package io.srdma.channel.record;

/**
 * Sliding anti-replay window over 64-bit sequences (as in RFC 6479): the highest sequence accepted
 * and a bitmap of the {@link #SIZE} sequences below it. Check before decrypting, mark after, so a
 * forged record cannot move the window. Not thread-safe.
 */
final class ReplayWindow {
  /** How far behind the highest accepted sequence a record may arrive. */
  static final int SIZE = 1024;

  private final long[] bits = new long[SIZE / 64];
  private long highest = -1;

  /** True when {@code sequence} was not accepted before and is not behind the window. */
  boolean isFresh(long sequence) {
    if (sequence < 0) {
      return false;
    }
    if (sequence > highest) {
      return true;
    }
    if (highest - sequence >= SIZE) {
      return false;
    }
    return (bits[word(sequence)] & bit(sequence)) == 0;
  }

  /** Records {@code sequence} as accepted; the caller checked {@link #isFresh}. */
  void mark(long sequence) {
    if (sequence > highest) {
      long advance = sequence - highest;
      if (advance >= SIZE) {
        java.util.Arrays.fill(bits, 0L);
      } else {
        for (long s = highest + 1; s < sequence; s++) {
          bits[word(s)] &= ~bit(s);
        }
      }
      highest = sequence;
    }
    bits[word(sequence)] |= bit(sequence);
  }

  long highest() {
    return highest;
  }

  private static int word(long sequence) {
    return (int) ((sequence % SIZE) >>> 6);
  }

  private static long bit(long sequence) {
    return 1L << (sequence & 63);
  }
}
