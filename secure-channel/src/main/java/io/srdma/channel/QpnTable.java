package io.srdma.channel;

import java.util.Arrays;

/**
 * An immutable open-addressing map from queue pair number to {@link CompletionTarget}: a lane swaps
 * in a new one when a client joins or leaves (copy on write), and its dispatch looks up every
 * completion without a lock and without allocating. Filled to at most half, so probes stay short.
 */
final class QpnTable {
  static final QpnTable EMPTY = new QpnTable(new int[8], new CompletionTarget[8], 0);

  private final int[] keys;
  private final CompletionTarget[] values; // null: free slot
  private final int mask;
  private final int size;

  private QpnTable(int[] keys, CompletionTarget[] values, int size) {
    this.keys = keys;
    this.values = values;
    this.mask = keys.length - 1;
    this.size = size;
  }

  /** The target of {@code qpn}, or null. */
  CompletionTarget get(int qpn) {
    for (int i = hash(qpn) & mask; ; i = (i + 1) & mask) {
      CompletionTarget t = values[i];
      if (t == null) {
        return null;
      }
      if (keys[i] == qpn) {
        return t;
      }
    }
  }

  int size() {
    return size;
  }

  /** A copy with {@code qpn} mapped to {@code target} (replacing any mapping of it). */
  QpnTable with(int qpn, CompletionTarget target) {
    int capacity = keys.length;
    while ((size + 1) * 2 > capacity) {
      capacity *= 2;
    }
    QpnTable copy = rehash(capacity, qpn);
    copy.put(qpn, target);
    return new QpnTable(copy.keys, copy.values, copy.countLive());
  }

  /** A copy without {@code qpn}. */
  QpnTable without(int qpn) {
    if (get(qpn) == null) {
      return this;
    }
    int capacity = keys.length;
    while (capacity > 8 && (size - 1) * 8 < capacity) {
      capacity /= 2; // shrink back once a quarter full
    }
    QpnTable copy = rehash(capacity, qpn);
    return new QpnTable(copy.keys, copy.values, size - 1);
  }

  /** Every target (slow path: failing a lane). */
  CompletionTarget[] targets() {
    return Arrays.stream(values).filter(v -> v != null).toArray(CompletionTarget[]::new);
  }

  /** A table of {@code capacity} slots with every mapping but {@code skip}'s. */
  private QpnTable rehash(int capacity, int skip) {
    QpnTable t = new QpnTable(new int[capacity], new CompletionTarget[capacity], 0);
    for (int i = 0; i < keys.length; i++) {
      if (values[i] != null && keys[i] != skip) {
        t.put(keys[i], values[i]);
      }
    }
    return t;
  }

  /** Only on a table under construction. */
  private void put(int qpn, CompletionTarget target) {
    for (int i = hash(qpn) & mask; ; i = (i + 1) & mask) {
      if (values[i] == null || keys[i] == qpn) {
        keys[i] = qpn;
        values[i] = target;
        return;
      }
    }
  }

  private int countLive() {
    int n = 0;
    for (CompletionTarget v : values) {
      if (v != null) {
        n++;
      }
    }
    return n;
  }

  private static int hash(int qpn) {
    int h = qpn * 0x9E3779B9; // QP numbers are often consecutive: spread them
    return h ^ (h >>> 16);
  }
}
