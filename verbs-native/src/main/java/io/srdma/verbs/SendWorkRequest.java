package io.srdma.verbs;

/**
 * A reusable send work request ({@code struct ibv_send_wr}). Fill it with the fluent setters, post
 * it, and reuse it: posting copies what the provider needs, so the object may be changed as soon as
 * {@link QueuePair#postSend} returns. Not thread-safe.
 *
 * <p>Opcodes and the fields they read:
 *
 * <ul>
 *   <li>RDMA_WRITE, RDMA_WRITE_WITH_IMM: {@link #sgl()} (local source), remote address, rkey,
 *       immediate data (with IMM).
 *   <li>RDMA_READ: {@link #sgl()} (local destination, needs LOCAL_WRITE), remote address, rkey.
 *   <li>SEND, SEND_WITH_IMM: {@link #sgl()}, immediate data (with IMM).
 *   <li>BIND_MW: window, memory region, bind address and length, access flags.
 *   <li>LOCAL_INV: the rkey to invalidate.
 * </ul>
 */
public final class SendWorkRequest {
  /** Flag: generate a completion on success (errors always complete). */
  public static final int SIGNALED = 1 << 1;

  /** Flag: wait for earlier RDMA READs to finish before this request is processed. */
  public static final int FENCE = 1;

  private final ScatterGatherList sgl;
  private long wrId;
  private WrOpcode opcode = WrOpcode.RDMA_WRITE;
  private int flags = SIGNALED;
  private long remoteAddress;
  private int rkey;
  private int immData;
  private MemoryWindow window;
  private MemoryRegion bindRegion;
  private long bindAddress;
  private long bindLength;
  private int bindAccess;
  private int invalidateRkey;

  /** A request with room for {@code maxSge} scatter/gather entries. */
  public SendWorkRequest(int maxSge) {
    this.sgl = new ScatterGatherList(maxSge);
  }

  /** The caller's identifier, returned in the completion. */
  public long wrId() {
    return wrId;
  }

  /** Sets the identifier. */
  public SendWorkRequest wrId(long value) {
    this.wrId = value;
    return this;
  }

  /** The operation. */
  public WrOpcode opcode() {
    return opcode;
  }

  /**
   * Sets the operation.
   *
   * @throws VerbsException INVALID_ARGUMENT for null
   */
  public SendWorkRequest opcode(WrOpcode value) {
    if (value == null) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "post_send", "opcode is null");
    }
    this.opcode = value;
    return this;
  }

  /** {@link #SIGNALED} and {@link #FENCE} bits. */
  public int flags() {
    return flags;
  }

  /** Sets the flags. */
  public SendWorkRequest flags(int value) {
    this.flags = value;
    return this;
  }

  /** True when a successful completion is reported. */
  public boolean signaled() {
    return (flags & SIGNALED) != 0;
  }

  /** Sets or clears {@link #SIGNALED}. */
  public SendWorkRequest signaled(boolean value) {
    this.flags = value ? flags | SIGNALED : flags & ~SIGNALED;
    return this;
  }

  /** The local scatter/gather list. */
  public ScatterGatherList sgl() {
    return sgl;
  }

  /** The remote virtual address (WRITE/READ). */
  public long remoteAddress() {
    return remoteAddress;
  }

  /** The remote key (WRITE/READ). */
  public int rkey() {
    return rkey;
  }

  /** Sets remote address and key of a WRITE or READ. */
  public SendWorkRequest remote(long address, int remoteKey) {
    this.remoteAddress = address;
    this.rkey = remoteKey;
    return this;
  }

  /** Immediate data, big-endian 32 bits (WITH_IMM opcodes). */
  public int immData() {
    return immData;
  }

  /** Sets the immediate data. */
  public SendWorkRequest immData(int value) {
    this.immData = value;
    return this;
  }

  /** Window to bind (BIND_MW). */
  public MemoryWindow window() {
    return window;
  }

  /** Region the window is bound over (BIND_MW). */
  public MemoryRegion bindRegion() {
    return bindRegion;
  }

  /** Start address of the window (BIND_MW). */
  public long bindAddress() {
    return bindAddress;
  }

  /** Length of the window (BIND_MW). */
  public long bindLength() {
    return bindLength;
  }

  /** Remote access rights of the window (BIND_MW). */
  public int bindAccess() {
    return bindAccess;
  }

  /**
   * Makes this a BIND_MW request.
   *
   * @param mw the type-2 window
   * @param mr the region, registered with {@link AccessFlags#MW_BIND}
   * @param address the window's first byte, inside {@code mr}
   * @param length the window's length
   * @param access REMOTE_WRITE and/or REMOTE_READ
   */
  public SendWorkRequest bind(
      MemoryWindow mw, MemoryRegion mr, long address, long length, int access) {
    this.opcode = WrOpcode.BIND_MW;
    this.window = mw;
    this.bindRegion = mr;
    this.bindAddress = address;
    this.bindLength = length;
    this.bindAccess = access;
    return this;
  }

  /** The rkey a LOCAL_INV invalidates. */
  public int invalidateRkey() {
    return invalidateRkey;
  }

  /** Makes this a LOCAL_INV request for {@code rkeyToInvalidate}. */
  public SendWorkRequest localInvalidate(int rkeyToInvalidate) {
    this.opcode = WrOpcode.LOCAL_INV;
    this.invalidateRkey = rkeyToInvalidate;
    return this;
  }
}
