package io.srdma.verbs;

import java.util.Arrays;
import java.util.BitSet;

/**
 * An immutable, non-empty set of CPU numbers (0 to {@link #MAX_CPU}), written as Linux writes CPU
 * lists ({@code taskset -c}, {@code Cpus_allowed_list}): {@code 0}, {@code 2-3}, {@code 0,2,4-7}.
 * Thread-safe.
 */
public final class CpuSet {
  /** The highest CPU number a set may hold ({@code CPU_SETSIZE - 1} of glibc). */
  public static final int MAX_CPU = 1023;

  private final BitSet cpus;

  private CpuSet(BitSet cpus) {
    this.cpus = cpus;
  }

  /**
   * Parses a CPU list.
   *
   * @throws IllegalArgumentException naming what is wrong: empty, not a number, a range that runs
   *     backwards, a CPU above {@link #MAX_CPU}
   */
  public static CpuSet parse(String list) {
    if (list == null || list.isBlank()) {
      throw new IllegalArgumentException("a CPU list is empty");
    }
    BitSet set = new BitSet();
    for (String part : list.split(",", -1)) {
      String p = part.strip();
      int dash = p.indexOf('-');
      int from = cpu(dash < 0 ? p : p.substring(0, dash), list);
      int to = dash < 0 ? from : cpu(p.substring(dash + 1), list);
      if (to < from) {
        throw new IllegalArgumentException(
            "CPU list '" + list + "': range " + p + " runs backwards");
      }
      set.set(from, to + 1);
    }
    return new CpuSet(set);
  }

  /**
   * The set of the given CPUs.
   *
   * @throws IllegalArgumentException when none is given or one is outside 0..{@link #MAX_CPU}
   */
  public static CpuSet of(int... cpus) {
    if (cpus.length == 0) {
      throw new IllegalArgumentException("a CPU set needs at least one CPU");
    }
    BitSet set = new BitSet();
    for (int c : cpus) {
      if (c < 0 || c > MAX_CPU) {
        throw new IllegalArgumentException("CPU " + c + " is outside 0.." + MAX_CPU);
      }
      set.set(c);
    }
    return new CpuSet(set);
  }

  /** The set whose bits are the given words ({@code cpu_set_t} layout), or null when empty. */
  static CpuSet fromMask(long[] words) {
    BitSet set = BitSet.valueOf(words);
    if (set.length() > MAX_CPU + 1) {
      set.clear(MAX_CPU + 1, set.length());
    }
    return set.isEmpty() ? null : new CpuSet(set);
  }

  private static int cpu(String text, String list) {
    String t = text.strip();
    if (t.isEmpty() || t.length() > 4 || !t.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
      throw new IllegalArgumentException(
          "CPU list '" + list + "': '" + t + "' is not a CPU number (0.." + MAX_CPU + ")");
    }
    int c = Integer.parseInt(t);
    if (c > MAX_CPU) {
      throw new IllegalArgumentException(
          "CPU list '" + list + "': CPU " + c + " is above " + MAX_CPU);
    }
    return c;
  }

  /** Whether {@code cpu} is in the set. */
  public boolean contains(int cpu) {
    return cpu >= 0 && cpus.get(cpu);
  }

  /** How many CPUs the set holds. */
  public int size() {
    return cpus.cardinality();
  }

  /** The CPUs, ascending. */
  public int[] toArray() {
    return cpus.stream().toArray();
  }

  /** The set as {@code words} 64-bit words, CPU 0 in bit 0 of the first ({@code cpu_set_t}). */
  long[] mask(int words) {
    return Arrays.copyOf(cpus.toLongArray(), words);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CpuSet other && cpus.equals(other.cpus);
  }

  @Override
  public int hashCode() {
    return cpus.hashCode();
  }

  /** The set in CPU-list form, ranges joined: {@code 0-3,6}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    int from = cpus.nextSetBit(0);
    while (from >= 0) {
      int to = cpus.nextClearBit(from) - 1;
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(from);
      if (to > from) {
        b.append('-').append(to);
      }
      from = cpus.nextSetBit(to + 1);
    }
    return b.toString();
  }
}
