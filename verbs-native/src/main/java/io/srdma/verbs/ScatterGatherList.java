package io.srdma.verbs;

/**
 * A reusable list of scatter/gather entries ({@code struct ibv_sge}): address, length and lkey of
 * each piece of local registered memory. Fixed capacity, no allocation after construction.
 */
public final class ScatterGatherList {
  private final long[] addresses;
  private final int[] lengths;
  private final int[] lkeys;
  private int count;

  /** A list with room for {@code capacity} entries. */
  public ScatterGatherList(int capacity) {
    if (capacity < 1) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "sge", "capacity must be >= 1");
    }
    addresses = new long[capacity];
    lengths = new int[capacity];
    lkeys = new int[capacity];
  }

  /** Removes all entries. */
  public ScatterGatherList clear() {
    count = 0;
    return this;
  }

  /**
   * Appends an entry.
   *
   * @param address the virtual address, inside the memory region of {@code lkey}
   * @param length the length in bytes (unsigned 32-bit in libibverbs; at most 2^31-1 here)
   * @param lkey the local key of the memory region
   */
  public ScatterGatherList add(long address, int length, int lkey) {
    if (count == addresses.length) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "sge",
          "more than " + addresses.length + " scatter/gather entries");
    }
    if (length < 0) {
      throw new VerbsException(VerbsException.Reason.INVALID_ARGUMENT, "sge", "negative length");
    }
    addresses[count] = address;
    lengths[count] = length;
    lkeys[count] = lkey;
    count++;
    return this;
  }

  /** Appends {@code length} bytes of {@code mr} starting {@code offset} bytes into it. */
  public ScatterGatherList add(MemoryRegion mr, long offset, int length) {
    return add(mr.address() + offset, length, mr.lkey());
  }

  /** Replaces the list with one entry. */
  public ScatterGatherList set(MemoryRegion mr, long offset, int length) {
    return clear().add(mr, offset, length);
  }

  /** Number of entries. */
  public int count() {
    return count;
  }

  /** Capacity. */
  public int capacity() {
    return addresses.length;
  }

  /** Address of entry {@code i}. */
  public long address(int i) {
    return addresses[i];
  }

  /** Length of entry {@code i}. */
  public int length(int i) {
    return lengths[i];
  }

  /** Local key of entry {@code i}. */
  public int lkey(int i) {
    return lkeys[i];
  }

  /** Sum of all lengths, in bytes. */
  public long totalLength() {
    long total = 0;
    for (int i = 0; i < count; i++) {
      total += lengths[i];
    }
    return total;
  }
}
