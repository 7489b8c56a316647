package io.srdma.verbs;

/** Work completion opcodes ({@code enum ibv_wc_opcode}); the numbers are libibverbs'. */
public enum WcOpcode {
  /** A SEND or SEND_WITH_IMM finished. */
  SEND(0),
  /** An RDMA WRITE or WRITE_WITH_IMM finished. */
  RDMA_WRITE(1),
  /** An RDMA READ finished. */
  RDMA_READ(2),
  /** A memory window bind finished. */
  BIND_MW(5),
  /** A local invalidate finished. */
  LOCAL_INV(6),
  /** A receive consumed by a SEND or SEND_WITH_IMM. */
  RECV(128),
  /** A receive consumed by an RDMA WRITE_WITH_IMM. */
  RECV_RDMA_WITH_IMM(129);

  private final int code;

  WcOpcode(int code) {
    this.code = code;
  }

  /** The libibverbs value. */
  public int code() {
    return code;
  }

  /** The opcode with libibverbs value {@code code}, or null if unknown. */
  public static WcOpcode fromCode(int code) {
    for (WcOpcode o : values()) {
      if (o.code == code) {
        return o;
      }
    }
    return null;
  }
}
