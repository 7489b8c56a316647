package io.srdma.channel.record;

/** The outcome of opening a record: typed, never an exception on the data path. */
public enum OpenResult {
  /** The record is authentic and fresh; its plaintext was written out. */
  OK,
  /** The header is not a record of this version (bad version, flags or reserved bits, length). */
  MALFORMED,
  /** The record claims more bytes than the space it was read from holds. */
  TRUNCATED,
  /** No keys for the record's epoch (too old, or not yet agreed). */
  UNKNOWN_EPOCH,
  /** The sequence was already accepted, or lies behind the replay window. */
  REPLAYED,
  /**
   * The GCM tag did not verify: tampered bytes, or a record relocated to another offset, region,
   * tenant or grant.
   */
  AUTH_FAILED,
  /** The caller's output buffer is too small for the plaintext. */
  NO_ROOM
}
