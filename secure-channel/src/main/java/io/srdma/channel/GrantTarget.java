package io.srdma.channel;

import io.srdma.channel.record.RecordBinding;
import java.time.Instant;

/**
 * Where a grant's records go: an immutable value the writer and reader act on, so a {@link
 * RemoteGrant} needs no call back into its client to check or place a write. Thread-safe.
 *
 * @param id the grant's id
 * @param tenant the region's tenant
 * @param region the region
 * @param offset the first granted byte of the region
 * @param length the granted bytes
 * @param accessBits {@link Access#bits} of the allowed operations
 * @param expiresAt when the grant expires (the host's clock)
 * @param remoteAddress the remote address of the grant's first byte
 * @param rkey the grant's rkey
 * @param unit the write unit of the immediate ({@link SealedLayout#writeUnit})
 * @param binding the associated data that binds a record to the grant
 */
record GrantTarget(
    long id,
    String tenant,
    String region,
    long offset,
    long length,
    int accessBits,
    Instant expiresAt,
    long remoteAddress,
    int rkey,
    long unit,
    RecordBinding binding) {

  /** The slot the host gave the grant on this session (the low 8 bits of its id). */
  int slot() {
    return (int) (id & 0xff);
  }

  /** The expiry as epoch milliseconds (checked on the hot path without allocating). */
  long expiresAtMillis() {
    return expiresAt.toEpochMilli();
  }

  /** The RDMA immediate that tells the host of a record at {@code relativeOffset}. */
  int immediate(long relativeOffset) {
    return (slot() << 24) | (int) (relativeOffset / unit);
  }

  /** Whether {@code span} bytes at {@code relativeOffset} lie inside the grant (overflow-safe). */
  boolean inBounds(long relativeOffset, long span) {
    return relativeOffset >= 0
        && span >= 0
        && relativeOffset <= length
        && length - relativeOffset >= span;
  }

  /** Whether the grant allows {@code needed}. */
  boolean allows(Access needed) {
    return (accessBits & needed.bit()) != 0;
  }
}
