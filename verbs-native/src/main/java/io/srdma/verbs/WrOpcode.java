package io.srdma.verbs;

/** Send work request opcodes ({@code enum ibv_wr_opcode}); the numbers are libibverbs'. */
public enum WrOpcode {
  /** One-sided write into remote memory. */
  RDMA_WRITE(0),
  /** One-sided write that also consumes a receive at the target and delivers 32 bits of data. */
  RDMA_WRITE_WITH_IMM(1),
  /** Two-sided send into the target's posted receive buffers. */
  SEND(2),
  /** Send with 32 bits of immediate data. */
  SEND_WITH_IMM(3),
  /** One-sided read of remote memory into local buffers. */
  RDMA_READ(4),
  /** Invalidates a type-2 memory window (or MR) rkey, locally. */
  LOCAL_INV(7),
  /** Binds a type-2 memory window to this queue pair over a range of a memory region. */
  BIND_MW(8);

  private final int code;

  WrOpcode(int code) {
    this.code = code;
  }

  /** The libibverbs value. */
  public int code() {
    return code;
  }

  /** True for opcodes that travel to the remote peer. */
  public boolean isRemote() {
    return this != LOCAL_INV && this != BIND_MW;
  }

  /** The opcode a completion of this request carries. */
  public WcOpcode completionOpcode() {
    return switch (this) {
      case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
      case SEND, SEND_WITH_IMM -> WcOpcode.SEND;
      case RDMA_READ -> WcOpcode.RDMA_READ;
      case LOCAL_INV -> WcOpcode.LOCAL_INV;
      case BIND_MW -> WcOpcode.BIND_MW;
    };
  }
}
