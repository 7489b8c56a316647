package io.srdma.verbs;

/**
 * A reusable receive work request ({@code struct ibv_recv_wr}): where an incoming SEND lands, and
 * the receive an incoming WRITE_WITH_IMM consumes. Posting copies it; reuse freely. Not
 * thread-safe.
 */
public final class ReceiveWorkRequest {
  private final ScatterGatherList sgl;
  private long wrId;

  /** A receive with room for {@code maxSge} entries. */
  public ReceiveWorkRequest(int maxSge) {
    this.sgl = new ScatterGatherList(maxSge);
  }

  /** The caller's identifier, returned in the completion. */
  public long wrId() {
    return wrId;
  }

  /** Sets the identifier. */
  public ReceiveWorkRequest wrId(long value) {
    this.wrId = value;
    return this;
  }

  /** Buffers, each needing {@link AccessFlags#LOCAL_WRITE}. */
  public ScatterGatherList sgl() {
    return sgl;
  }
}
