package io.srdma.channel;

import io.srdma.channel.protocol.Operations;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a grant lets its holder do to the region: one-sided RDMA READ or WRITE.
 *
 * <p>Thread safety: an enum, immutable. Buffers: none.
 */
public enum Access {
  /** Fetch (owner-sealed) records with RDMA READ. */
  READ(Operations.READ),
  /** Put sealed records with RDMA WRITE. */
  WRITE(Operations.WRITE);

  private final int bit;

  Access(int bit) {
    this.bit = bit;
  }

  /** This operation's bit in {@link #bits}. */
  int bit() {
    return bit;
  }

  static int bits(Set<Access> set) {
    int b = 0;
    for (Access a : set) {
      b |= a.bit;
    }
    return b;
  }

  static Set<Access> fromBits(int bits) {
    Set<Access> s = EnumSet.noneOf(Access.class);
    for (Access a : values()) {
      if ((bits & a.bit) != 0) {
        s.add(a);
      }
    }
    return s;
  }
}
