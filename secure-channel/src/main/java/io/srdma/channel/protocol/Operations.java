package io.srdma.channel.protocol;

/** The operations bitmask of grant requests and grants: at least one bit, no unknown bit. */
public final class Operations {
  /** RDMA READ from the region. */
  public static final int READ = 1;

  /** RDMA WRITE (with or without immediate) into the region. */
  public static final int WRITE = 2;

  /** Every operation version 1 knows. */
  public static final int ALL = READ | WRITE;

  private Operations() {}

  /** Whether {@code ops} has at least one bit and only known ones. */
  public static boolean isValid(int ops) {
    return ops != 0 && (ops & ~ALL) == 0;
  }

  /** Whether {@code ops} includes READ. */
  public static boolean includesRead(int ops) {
    return (ops & READ) != 0;
  }

  static int check(int ops) {
    if (!isValid(ops)) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_ENUM, "operations 0x" + Integer.toHexString(ops));
    }
    return ops;
  }
}
