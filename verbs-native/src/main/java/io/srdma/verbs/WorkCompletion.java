package io.srdma.verbs;

/**
 * One work completion ({@code struct ibv_wc}). Reusable: {@link CompletionQueue#poll} fills the
 * caller's objects, so polling allocates nothing.
 */
public final class WorkCompletion {
  private long wrId;
  private WcStatus status = WcStatus.SUCCESS;
  private WcOpcode opcode = WcOpcode.SEND;
  private int byteLength;
  private int immData;
  private boolean hasImm;
  private int qpNum;

  /** The identifier of the work request. */
  public long wrId() {
    return wrId;
  }

  /** How it ended. */
  public WcStatus status() {
    return status;
  }

  /**
   * What completed. As in libibverbs, only meaningful when the status is SUCCESS: providers need
   * not set it on error completions (the soft provider does; rxe does not).
   */
  public WcOpcode opcode() {
    return opcode;
  }

  /** Bytes received (receives) or read (RDMA_READ). */
  public int byteLength() {
    return byteLength;
  }

  /** Immediate data, when {@link #hasImm()}. */
  public int immData() {
    return immData;
  }

  /** True when the completion carries immediate data. */
  public boolean hasImm() {
    return hasImm;
  }

  /**
   * Number of the local queue pair the completion belongs to: the one the request was posted on,
   * or, for a receive taken from a {@link SharedReceiveQueue}, the one the message arrived on. Set
   * by every provider; on a CQ shared by many queue pairs it tells the consumer the source.
   */
  public int qpNum() {
    return qpNum;
  }

  /**
   * Fills this completion; for providers.
   *
   * @return this
   */
  public WorkCompletion set(
      long wrId,
      WcStatus status,
      WcOpcode opcode,
      int byteLength,
      boolean hasImm,
      int immData,
      int qpNum) {
    this.wrId = wrId;
    this.status = status;
    this.opcode = opcode;
    this.byteLength = byteLength;
    this.hasImm = hasImm;
    this.immData = immData;
    this.qpNum = qpNum;
    return this;
  }

  @Override
  public String toString() {
    return "WorkCompletion{wrId="
        + wrId
        + ", status="
        + status
        + ", opcode="
        + opcode
        + ", byteLength="
        + byteLength
        + (hasImm ? ", imm=0x" + Integer.toHexString(immData) : "")
        + ", qpNum=0x"
        + Integer.toHexString(qpNum)
        + "}";
  }
}
