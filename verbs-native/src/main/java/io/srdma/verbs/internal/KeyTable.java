package io.srdma.verbs.internal;

import java.security.SecureRandom;
import java.util.concurrent.locks.StampedLock;

/**
 * Keys of one device: lkeys, rkeys, QP numbers. Keys are drawn from {@link SecureRandom}, never
 * zero, never equal to a live key, and carry no index: knowing one key tells nothing about another
 * (ReDMArk broke 24-bit-index + 8-bit-key rkeys). Lookups allocate nothing. Shared by the soft and
 * loopback providers; not API.
 */
public final class KeyTable<T> {
  private final StampedLock lock = new StampedLock();
  private final SecureRandom random;
  private final int mask;
  private Table table = new Table(64);
  private int size;

  /**
   * A table of keys with the bits of {@code mask} (0xFFFFFFFF for rkeys, 0xFFFFFF for QPNs).
   *
   * @param random the generator
   * @param mask which bits a key may use
   */
  public KeyTable(SecureRandom random, int mask) {
    this.random = random;
    this.mask = mask;
  }

  /** Stores {@code value} under a fresh random key and returns the key. */
  public int allocate(T value) {
    long stamp = lock.writeLock();
    try {
      while (true) {
        int key = random.nextInt() & mask;
        if (key != 0 && find(table, key) < 0) {
          put(key, value);
          return key;
        }
      }
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /** The value under {@code key}, or null. */
  @SuppressWarnings("unchecked")
  public T get(int key) {
    long stamp = lock.tryOptimisticRead();
    Table t = table;
    int i = find(t, key);
    Object v = i < 0 ? null : t.values[i];
    if (lock.validate(stamp)) {
      return (T) v;
    }
    stamp = lock.readLock();
    try {
      t = table;
      i = find(t, key);
      return i < 0 ? null : (T) t.values[i];
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /** Removes {@code key} if it maps to {@code value}; returns whether it did. */
  public boolean remove(int key, T value) {
    long stamp = lock.writeLock();
    try {
      int i = find(table, key);
      if (i < 0 || table.values[i] != value) {
        return false;
      }
      deleteAt(i);
      size--;
      return true;
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /** Number of live keys. */
  public int size() {
    long stamp = lock.readLock();
    try {
      return size;
    } finally {
      lock.unlockRead(stamp);
    }
  }

  private void put(int key, T value) {
    if ((size + 1) * 2 > table.keys.length) {
      Table bigger = new Table(table.keys.length * 2);
      for (int i = 0; i < table.keys.length; i++) {
        if (table.values[i] != null) {
          insert(bigger, table.keys[i], table.values[i]);
        }
      }
      table = bigger;
    }
    insert(table, key, value);
    size++;
  }

  private static void insert(Table t, int key, Object value) {
    int m = t.keys.length - 1;
    int i = mix(key) & m;
    while (t.values[i] != null) {
      i = (i + 1) & m;
    }
    t.keys[i] = key;
    t.values[i] = value;
  }

  private static int find(Table t, int key) {
    int m = t.keys.length - 1;
    int i = mix(key) & m;
    for (int probes = 0; probes <= m; probes++) {
      Object v = t.values[i];
      if (v == null) {
        return -1;
      }
      if (t.keys[i] == key) {
        return i;
      }
      i = (i + 1) & m;
    }
    return -1;
  }

  /** Backward-shift deletion keeps probe chains intact without tombstones. */
  private void deleteAt(int hole) {
    Table t = table;
    int m = t.keys.length - 1;
    t.values[hole] = null;
    int i = (hole + 1) & m;
    while (t.values[i] != null) {
      int home = mix(t.keys[i]) & m;
      boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
      if (movable) {
        t.keys[hole] = t.keys[i];
        t.values[hole] = t.values[i];
        t.values[i] = null;
        hole = i;
      }
      i = (i + 1) & m;
    }
  }

  private static int mix(int key) {
    int h = key * 0x9E3779B9;
    return h ^ (h >>> 16);
  }

  private static final class Table {
    final int[] keys;
    final Object[] values;

    Table(int capacity) {
      keys = new int[capacity];
      values = new Object[capacity];
    }
  }
}
