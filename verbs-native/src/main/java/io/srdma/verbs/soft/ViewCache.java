package io.srdma.verbs.soft;

import java.nio.ByteBuffer;

/**
 * Reusable views over registered memory for channel reads and writes, one per slot of a gather or
 * scatter array. A slot keeps its view while it keeps seeing the same region, so steady traffic
 * allocates nothing. Confined to one thread.
 */
final class ViewCache {
  private final SoftMemoryRegion[] owners;
  private final ByteBuffer[] views;

  ViewCache(int slots) {
    owners = new SoftMemoryRegion[slots];
    views = new ByteBuffer[slots];
  }

  /** A view of {@code [offset, offset+length)} of {@code mr}'s memory, in slot {@code slot}. */
  ByteBuffer view(int slot, SoftMemoryRegion mr, long offset, int length) {
    ByteBuffer v = views[slot];
    if (owners[slot] != mr) {
      v = mr.memory().duplicate();
      views[slot] = v;
      owners[slot] = mr;
    }
    v.clear().position((int) offset).limit((int) offset + length);
    return v;
  }
}
