package io.srdma.channel;

/**
 * Result codes of the non-allocating writes ({@link RemoteGrant#tryWrite} and {@link
 * RemoteGrant#tryWriteBatch}): a write that was posted returns its <em>position</em> (&gt; 0), any
 * other outcome one of these negative codes, and nothing was posted.
 *
 * <p>A position is the count of records this client has posted once the write's last record is
 * posted; the write has completed at the target when {@link SecureRdmaClient#completedPosition()}
 * reaches it (or a {@link WriteCompletionHandler} reports it) with no failure before it.
 *
 * <p>Thread safety: constants and static methods only, usable from any thread. Buffers: none.
 */
public final class WriteResult {
  /**
   * No staging slot is free (completions must free one first), or the host has no receive credited
   * for the record (its opener must catch up first); try again (nothing posted).
   */
  public static final long BACK_PRESSURED = -1;

  /** The grant does not allow WRITE. */
  public static final long NOT_PERMITTED = -2;

  /** The host revoked the grant, or it was released. */
  public static final long REVOKED = -3;

  /** The grant expired. */
  public static final long EXPIRED = -4;

  /**
   * A byte of the write would fall outside the grant, or the offset is not a write unit multiple.
   */
  public static final long OUT_OF_BOUNDS = -5;

  /** The session is closed or was lost. */
  public static final long SESSION_CLOSED = -6;

  /** Empty data, too many pieces or records for the staging slots, or a bad buffer range. */
  public static final long INVALID_ARGUMENT = -7;

  /** The queue pair failed earlier ({@link SecureRdmaClient#dataPathFailure()} says why). */
  public static final long DATA_PATH_FAILED = -8;

  /** The key epoch is used up and a new one could not be made (the session ends). */
  public static final long SEALING_REFUSED = -9;

  private WriteResult() {}

  /** Whether {@code result} is a position (the write was posted). */
  public static boolean isPosted(long result) {
    return result > 0;
  }

  /** The constant's name ({@code "BACK_PRESSURED"}, …), or {@code "POSITION"} for a position. */
  public static String name(long result) {
    if (result > 0) {
      return "POSITION";
    }
    return switch ((int) result) {
      case -1 -> "BACK_PRESSURED";
      case -2 -> "NOT_PERMITTED";
      case -3 -> "REVOKED";
      case -4 -> "EXPIRED";
      case -5 -> "OUT_OF_BOUNDS";
      case -6 -> "SESSION_CLOSED";
      case -7 -> "INVALID_ARGUMENT";
      case -8 -> "DATA_PATH_FAILED";
      case -9 -> "SEALING_REFUSED";
      default -> "UNKNOWN(" + result + ")";
    };
  }

  /**
   * The {@link ChannelException} reason of a negative code (BACK_PRESSURED: RESOURCE_EXHAUSTED).
   */
  static ChannelException.Reason reason(long result) {
    return switch ((int) result) {
      case -1, -9 -> ChannelException.Reason.RESOURCE_EXHAUSTED;
      case -2 -> ChannelException.Reason.NOT_PERMITTED;
      case -3 -> ChannelException.Reason.REVOKED;
      case -4 -> ChannelException.Reason.EXPIRED;
      case -5 -> ChannelException.Reason.OUT_OF_BOUNDS;
      case -6 -> ChannelException.Reason.SESSION_CLOSED;
      case -7 -> ChannelException.Reason.INVALID_ARGUMENT;
      default -> ChannelException.Reason.TRANSPORT_FAILED;
    };
  }
}
