package io.srdma.verbs;

import java.util.StringJoiner;

/**
 * Access flags of memory regions, memory windows and queue pairs ({@code enum ibv_access_flags}).
 */
public final class AccessFlags {
  /** The local HCA may write the memory (needed for READ targets and receive buffers). */
  public static final int LOCAL_WRITE = 1;

  /** Remote peers may RDMA WRITE the memory. */
  public static final int REMOTE_WRITE = 1 << 1;

  /** Remote peers may RDMA READ the memory. */
  public static final int REMOTE_READ = 1 << 2;

  /** Memory windows may be bound over this memory region. */
  public static final int MW_BIND = 1 << 4;

  /** All flags this layer knows. */
  public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | MW_BIND;

  private AccessFlags() {}

  /**
   * Checks that {@code flags} holds only known bits.
   *
   * @param verb the verb to name in the error
   * @param flags the flags to check
   * @return {@code flags}
   * @throws VerbsException INVALID_ARGUMENT naming the unknown bits
   */
  public static int validate(String verb, int flags) {
    if ((flags & ~ALL) != 0) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "unknown access flag bits 0x" + Integer.toHexString(flags & ~ALL));
    }
    return flags;
  }

  /** True when every bit of {@code required} is set in {@code flags}. */
  public static boolean has(int flags, int required) {
    return (flags & required) == required;
  }

  /** A readable form such as {@code LOCAL_WRITE|REMOTE_READ}. */
  public static String toString(int flags) {
    StringJoiner j = new StringJoiner("|");
    if (has(flags, LOCAL_WRITE)) {
      j.add("LOCAL_WRITE");
    }
    if (has(flags, REMOTE_WRITE)) {
      j.add("REMOTE_WRITE");
    }
    if (has(flags, REMOTE_READ)) {
      j.add("REMOTE_READ");
    }
    if (has(flags, MW_BIND)) {
      j.add("MW_BIND");
    }
    return j.length() == 0 ? "NONE" : j.toString();
  }
}
