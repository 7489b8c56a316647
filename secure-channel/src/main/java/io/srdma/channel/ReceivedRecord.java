package io.srdma.channel;

import java.nio.ByteBuffer;

/**
 * One opened record as the host application sees it. Reused between calls of a {@link
 * RecordListener}: read it during the call only.
 *
 * <p>Thread safety: not thread-safe; one instance is filled and reused by the host's receiver
 * thread. Buffers: {@link #payload} is a read-only view of the host's memory, valid during the
 * listener's call only; copy what must outlive it.
 */
public final class ReceivedRecord {
  private String identity;
  private String tenant;
  private String region;
  private long grantId;
  private long offset;
  private ByteBuffer payload;

  ReceivedRecord set(
      String identity,
      String tenant,
      String region,
      long grantId,
      long offset,
      ByteBuffer payload) {
    this.identity = identity;
    this.tenant = tenant;
    this.region = region;
    this.grantId = grantId;
    this.offset = offset;
    this.payload = payload;
    return this;
  }

  /** The writer's identity ({@code srdma://tenant/peer}, from its certificate). */
  public String identity() {
    return identity;
  }

  /** The tenant. */
  public String tenant() {
    return tenant;
  }

  /** The region written. */
  public String region() {
    return region;
  }

  /** The grant the record was written under. */
  public long grantId() {
    return grantId;
  }

  /** The record's offset in the region. */
  public long offset() {
    return offset;
  }

  /** The plaintext, read-only, position 0; valid during the call only. */
  public ByteBuffer payload() {
    return payload;
  }
}
