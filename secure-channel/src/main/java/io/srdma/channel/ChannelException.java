package io.srdma.channel;

/**
 * Why a channel operation failed. Control-plane calls throw it (or complete their stage with it);
 * {@link #reason()} says what went wrong, the message names the value at fault.
 *
 * <p>Thread safety: immutable once thrown. Buffers: none.
 */
public final class ChannelException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What went wrong. */
  public enum Reason {
    /** The control-plane connection could not be made or the TLS handshake failed. */
    CONNECT_FAILED,
    /** The peer's certificate or key confirmation was refused. */
    AUTHENTICATION_FAILED,
    /** The peer broke the protocol (malformed, oversized or unexpected frame). */
    PROTOCOL,
    /** An answer did not come within the request deadline. */
    TIMEOUT,
    /** The host refused the grant; {@link #detail()} names the policy reason. */
    GRANT_DENIED,
    /** The grant was revoked (by an operator, a policy change, release or session end). */
    REVOKED,
    /** The grant's time-to-live is over. */
    EXPIRED,
    /** Offset or length outside the grant, or not on the grant's write unit. */
    OUT_OF_BOUNDS,
    /** The grant does not include this operation. */
    NOT_PERMITTED,
    /**
     * The target's RNIC refused the access (REM_ACCESS_ERR: invalid or revoked rkey, out of the
     * window's bounds or rights; or another refusal by the target). The queue pair is in error.
     */
    REMOTE_ACCESS_ERROR,
    /**
     * The data path broke: the transport gave up (peer gone, link down: RETRY_EXC_ERR, RNR retries
     * exhausted, a bad response), posting failed, or the queue pair was flushed after such a
     * failure. The queue pair is in error.
     */
    TRANSPORT_FAILED,
    /** A record failed to open (tampered, relocated, truncated, replayed or unknown epoch). */
    RECORD_REJECTED,
    /** A quota or rate limit refused the request. */
    QUOTA_EXCEEDED,
    /** No staging slot, window or queue entry was free within the deadline. */
    RESOURCE_EXHAUSTED,
    /** The session is over (closed, lost, or ended by an error). */
    SESSION_CLOSED,
    /** An argument is invalid. */
    INVALID_ARGUMENT
  }

  private final Reason reason;
  private final String detail;

  /**
   * An exception.
   *
   * @param reason what went wrong
   * @param message a sentence naming the value at fault; never a secret
   */
  public ChannelException(Reason reason, String message) {
    this(reason, null, message, null);
  }

  /**
   * An exception with a machine-readable detail (such as a policy deny reason) and a cause.
   *
   * @param reason what went wrong
   * @param detail machine-readable detail, or null
   * @param message a sentence naming the value at fault
   * @param cause the underlying failure, or null
   */
  public ChannelException(Reason reason, String detail, String message, Throwable cause) {
    super(reason + ": " + message, cause);
    this.reason = reason;
    this.detail = detail;
  }

  /** What went wrong. */
  public Reason reason() {
    return reason;
  }

  /** Machine-readable detail, e.g. the deny reason {@code OUT_OF_BOUNDS}; may be null. */
  public String detail() {
    return detail;
  }
}
