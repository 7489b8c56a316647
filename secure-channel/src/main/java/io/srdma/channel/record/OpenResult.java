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
  NO_ROOM,
  /**
   * An owner record whose signature does not verify under the region owner's public key: forged
   * (for instance by a peer that holds the region key and WRITE access), tampered or torn.
   */
  BAD_SIGNATURE,
  /**
   * An authentic owner record older (lower version) than one this reader already opened at the same
   * offset: put back (rolled back).
   */
  ROLLED_BACK
}
