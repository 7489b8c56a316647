package io.srdma.host;

import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The owner records a {@link HostedRegion} sealed and still counts as its own, by region offset:
 * payload length, version, and whether the record says another follows it end to end. Not
 * thread-safe: used under the region's lock.
 */
final class OwnerRecords implements Iterable<OwnerRecords.Entry> {
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

    /** The region offset just past the record ({@code overhead}: an owner record's). */
    long end(int overhead) {
      return at + payload + overhead;
    }
  }

  private final int overhead;
  private final TreeMap<Long, Entry> byOffset = new TreeMap<>();

  /**
   * Records of {@code overhead} bytes beyond their payload.
   *
   * @param overhead what an owner record adds to its payload
   */
  OwnerRecords(int overhead) {
    this.overhead = overhead;
  }

  /** Forgets the records that the range {@code [at, at + length)} overwrites. */
  void forget(long at, long length) {
    Map.Entry<Long, Entry> below = byOffset.lowerEntry(at);
    if (below != null && below.getValue().end(overhead) > at) {
      byOffset.remove(below.getKey());
    }
    byOffset.subMap(at, true, at + length, false).clear();
  }

  /** Records a record sealed at {@code at}. */
  void put(long at, int payload, long version, boolean followed) {
    byOffset.put(at, new Entry(at, payload, version, followed));
  }

  /** Whether a record begins at {@code at}. */
  boolean startsAt(long at) {
    return byOffset.containsKey(at);
  }

  /** The record that ends exactly at {@code at}, or null. */
  Entry endingAt(long at) {
    Map.Entry<Long, Entry> below = byOffset.lowerEntry(at);
    return below != null && below.getValue().end(overhead) == at ? below.getValue() : null;
  }

  /** Forgets the record at {@code at}. */
  void remove(long at) {
    byOffset.remove(at);
  }

  int size() {
    return byOffset.size();
  }

  void clear() {
    byOffset.clear();
  }

  /** In offset order; {@link Iterator#remove} forgets a record. */
  @Override
  public Iterator<Entry> iterator() {
    return byOffset.values().iterator();
  }
}
