package io.srdma.channel.record;

import io.srdma.keys.DirectionKeys;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The send key of one direction and its sequence counter, shared by every {@link RecordSealer} that
 * seals under that key (one sealer per core). Sequences are handed out atomically, so records
 * sealed on several threads never share a nonce; a rekey swaps key and counter together.
 */
public final class SealingKeys {
  private volatile Generation current;

  /**
   * @param keys the send keys of the current epoch
   */
  public SealingKeys(DirectionKeys keys) {
    this.current = new Generation(keys);
  }

  /** Switches to the next epoch's keys; sequences restart at 0 under the new key. */
  public synchronized void rekey(DirectionKeys next) {
    int now = current.keys.epoch();
    if (next.epoch() <= now) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT, "epoch " + next.epoch() + " does not follow " + now);
    }
    current = new Generation(next);
  }

  /** The epoch records are sealed under now. */
  public int epoch() {
    return current.keys.epoch();
  }

  /** The sequence the next record will get under the current key. */
  public long nextSequence() {
    return current.sequence.get();
  }

  Generation generation() {
    return current;
  }

  /** One key and its counter. */
  static final class Generation {
    final DirectionKeys keys;
    private final AtomicLong sequence = new AtomicLong();

    Generation(DirectionKeys keys) {
      this.keys = keys;
    }

    /** The next sequence, or -1 when the key's sequences are spent (never wraps). */
    long reserve() {
      long s = sequence.getAndUpdate(v -> v == Long.MAX_VALUE ? v : v + 1);
      return s == Long.MAX_VALUE ? -1 : s;
    }
  }
}
