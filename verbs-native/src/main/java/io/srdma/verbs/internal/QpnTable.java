package io.srdma.verbs.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * An immutable open-addressing map from queue pair number to a value: the owner swaps in a new one
 * when a queue pair joins or leaves (copy on write), and the thread that dispatches completions
 * looks up every one without a lock and without allocating (no boxing: QP numbers are random, so an
 * {@code Integer} key would allocate on nearly every lookup). Filled to at most half, so probes
 * stay short. Used by the client's completion lanes and the host's opener threads; not API.
 *
 * <p>Thread-safe: immutable; publish a new table through a volatile field.
 *
 * @param <T> the value type
 */
public final class QpnTable<T> {
  private static final QpnTable<?> EMPTY = new QpnTable<>(new int[8], new Object[8], 0);

  private final int[] keys;
  private final Object[] values; // null: free slot
  private final int mask;
  private final int size;

  /** The empty table. */
  @SuppressWarnings("unchecked")
  public static <T> QpnTable<T> empty() {
    return (QpnTable<T>) EMPTY;
  }

  private QpnTable(int[] keys, Object[] values, int size) {
    this.keys = keys;
    this.values = values;
    this.mask = keys.length - 1;
    this.size = size;
  }

  /** The value of {@code qpn}, or null. */
  @SuppressWarnings("unchecked")
  public T get(int qpn) {
    for (int i = hash(qpn) & mask; ; i = (i + 1) & mask) {
      Object t = values[i];
      if (t == null) {
        return null;
      }
      if (keys[i] == qpn) {
        return (T) t;
      }
    }
  }

  /** Mappings in the table. */
  public int size() {
    return size;
  }

  /** A copy with {@code qpn} mapped to {@code target} (not null; replacing any mapping of it). */
  public QpnTable<T> with(int qpn, T target) {
    if (target == null) {
      throw new IllegalArgumentException("null value for queue pair " + qpn);
    }
    int capacity = keys.length;
    while ((size + 1) * 2 > capacity) {
      capacity *= 2;
    }
    QpnTable<T> copy = rehash(capacity, qpn);
    copy.put(qpn, target);
    return new QpnTable<>(copy.keys, copy.values, copy.countLive());
  }

  /** A copy without {@code qpn} (this table when it has no mapping of it). */
  public QpnTable<T> without(int qpn) {
    if (get(qpn) == null) {
      return this;
    }
    int capacity = keys.length;
    while (capacity > 8 && (size - 1) * 8 < capacity) {
      capacity /= 2; // shrink back once a quarter full
    }
    QpnTable<T> copy = rehash(capacity, qpn);
    return new QpnTable<>(copy.keys, copy.values, size - 1);
  }

  /** Every value (slow path: failing a lane), a new list. */
  @SuppressWarnings("unchecked")
  public List<T> values() {
    List<T> out = new ArrayList<>(size);
    for (Object v : values) {
      if (v != null) {
        out.add((T) v);
      }
    }
    return out;
  }

  /** A table of {@code capacity} slots with every mapping but {@code skip}'s. */
  private QpnTable<T> rehash(int capacity, int skip) {
    QpnTable<T> t = new QpnTable<>(new int[capacity], new Object[capacity], 0);
    for (int i = 0; i < keys.length; i++) {
      if (values[i] != null && keys[i] != skip) {
        t.put(keys[i], values[i]);
      }
    }
    return t;
  }

  /** Only on a table under construction. */
  private void put(int qpn, Object target) {
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
    for (Object v : values) {
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
