package io.srdma.host;

import io.srdma.channel.ChannelException;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.OwnerOpener;
import io.srdma.channel.record.OwnerSealer;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The owner records a {@link HostedRegion} sealed into its memory and still counts as its own, by
 * region offset (payload length, version, whether the record says another follows it end to end),
 * and the writing of them: runs of records sealed last first, the record before a run re-sealed to
 * say it is followed, every intact record re-sealed at a rotation. Versions come from one counter
 * that only grows. Not thread-safe: used under the region's lock.
 */
final class OwnerRecords {
  private static final int OVERHEAD = OwnerSealer.OVERHEAD;

  /** One published record. */
  static final class Entry {
    final long at;
    final int payload;
    long version;
    boolean followed;

    Entry(long at, int payload, long version, boolean followed) {
      this.at = at;
      this.payload = payload;
      this.version = version;
      this.followed = followed;
    }

    /** The region offset just past the record. */
    long end() {
      return at + payload + OVERHEAD;
    }
  }

  private final ByteBuffer memory;
  private final int maxPayload;
  private final TreeMap<Long, Entry> byOffset = new TreeMap<>();
  private long nextVersion = 1;

  /**
   * The records of {@code memory}, of at most {@code maxPayload} bytes each.
   *
   * @param memory the region's memory
   * @param maxPayload the largest payload of one record
   */
  OwnerRecords(ByteBuffer memory, int maxPayload) {
    this.memory = memory;
    this.maxPayload = maxPayload;
  }

  /**
   * Seals {@code plaintext} (from its position; not moved) at {@code offset} as records end to end
   * with {@code sealer}; the caller checked that they fit. Every record but the last says another
   * follows, and so does the last when one of these records begins where it ends; a record that
   * ends where they begin is re-sealed to say so (opened with {@code currentOpener}'s opener, made
   * only then). Written last first, and the one before them re-sealed after them, so a record never
   * says one follows before that one is there.
   *
   * @throws ChannelException {@code RESOURCE_EXHAUSTED} when the key's sequence is spent
   */
  void sealRun(
      OwnerSealer sealer, long offset, ByteBuffer plaintext, Supplier<OwnerOpener> currentOpener) {
    int length = plaintext.remaining();
    int records = (int) ((length + (long) maxPayload - 1) / maxPayload);
    for (int i = records - 1; i >= 0; i--) {
      int from = i * maxPayload;
      int n = Math.min(length - from, maxPayload);
      long at = offset + (long) i * (maxPayload + OVERHEAD);
      boolean followed = i < records - 1 || byOffset.containsKey(at + n + OVERHEAD);
      forget(at, n + OVERHEAD);
      long version = nextVersion++;
      ByteBuffer chunk = plaintext.slice(plaintext.position() + from, n);
      int written = sealer.seal(chunk, version, followed, at, memory, (int) at);
      if (written < 0) {
        throw new ChannelException(
            ChannelException.Reason.RESOURCE_EXHAUSTED,
            "region key sequence spent (" + written + ")");
      }
      byOffset.put(at, new Entry(at, n, version, followed));
    }
    Entry before = records > 0 ? endingAt(offset) : null;
    if (before != null && !before.followed) {
      ByteBuffer plain = ByteBuffer.allocate(before.payload);
      try {
        if (!reseal(currentOpener.get(), sealer, before, plain, true)) {
          byOffset.remove(before.at);
        }
      } finally {
        Arrays.fill(plain.array(), (byte) 0);
      }
    }
  }

  /**
   * Re-seals every intact record (opened with {@code check}) with {@code sealer}, a new version
   * each; forgets the others (overwritten by a writer, or an older one put back).
   *
   * @return how many were forgotten
   */
  int resealAll(OwnerOpener check, OwnerSealer sealer) {
    ByteBuffer plain = ByteBuffer.allocate(maxPayload);
    int dropped = 0;
    try {
      for (Iterator<Entry> it = byOffset.values().iterator(); it.hasNext(); ) {
        Entry e = it.next();
        if (!reseal(check, sealer, e, plain, e.followed)) {
          it.remove();
          dropped++;
        }
      }
    } finally {
      Arrays.fill(plain.array(), (byte) 0);
    }
    return dropped;
  }

  /**
   * Opens record {@code e} in place with {@code check} and seals it again with {@code sealer} and
   * the next version.
   *
   * @return false when it no longer opens with the version this region wrote: not ours any more,
   *     never re-sealed
   */
  private boolean reseal(
      OwnerOpener check, OwnerSealer sealer, Entry e, ByteBuffer plain, boolean followed) {
    plain.clear();
    OpenResult r = check.open(memory, (int) e.at, e.payload + OVERHEAD, e.at, plain);
    if (r != OpenResult.OK || check.lastVersion() != e.version) {
      return false;
    }
    plain.flip();
    long version = nextVersion++;
    if (sealer.seal(plain, version, followed, e.at, memory, (int) e.at) < 0) {
      return false;
    }
    e.version = version;
    e.followed = followed;
    return true;
  }

  /** Forgets the records that the range {@code [at, at + length)} overwrites. */
  private void forget(long at, long length) {
    Map.Entry<Long, Entry> below = byOffset.lowerEntry(at);
    if (below != null && below.getValue().end() > at) {
      byOffset.remove(below.getKey());
    }
    byOffset.subMap(at, true, at + length, false).clear();
  }

  /** The record that ends exactly at {@code at}, or null. */
  private Entry endingAt(long at) {
    Map.Entry<Long, Entry> below = byOffset.lowerEntry(at);
    return below != null && below.getValue().end() == at ? below.getValue() : null;
  }

  int size() {
    return byOffset.size();
  }

  void clear() {
    byOffset.clear();
  }
}
