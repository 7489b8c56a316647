package io.srdma.verbs;

/**
 * The one unchecked exception of the verbs layer. Verbs calls that libibverbs would fail with an
 * errno fail with this, carrying a {@link Reason} and the name of the verb. Failures of posted work
 * are not exceptions: they arrive as {@link WorkCompletion}s with a {@link WcStatus}.
 */
public final class VerbsException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why a verb failed; the errno libibverbs would return is given for each. */
  public enum Reason {
    /** A bad argument (EINVAL). */
    INVALID_ARGUMENT,
    /** The object is in a state that does not allow the verb (EINVAL on a QP state). */
    INVALID_STATE,
    /** A queue or table is full (ENOMEM). */
    RESOURCE_EXHAUSTED,
    /** A parent still has live children (EBUSY). */
    BUSY,
    /** The object was already closed (EBADF). */
    CLOSED,
    /** The provider does not implement this verb (EOPNOTSUPP). */
    NOT_SUPPORTED,
    /** The provider or device cannot be used on this machine. */
    PROVIDER_UNAVAILABLE,
    /** A transport-level failure (EIO). */
    IO
  }

  private final Reason reason;
  private final String verb;

  /**
   * Creates an exception.
   *
   * @param reason the category
   * @param verb the verb that failed, such as {@code post_send}
   * @param message what was wrong, for a human
   */
  public VerbsException(Reason reason, String verb, String message) {
    super(verb + ": " + message);
    this.reason = reason;
    this.verb = verb;
  }

  /**
   * Creates an exception with a cause.
   *
   * @param reason the category
   * @param verb the verb that failed
   * @param message what was wrong
   * @param cause the underlying failure
   */
  public VerbsException(Reason reason, String verb, String message, Throwable cause) {
    super(verb + ": " + message, cause);
    this.reason = reason;
    this.verb = verb;
  }

  /** The category of the failure. */
  public Reason reason() {
    return reason;
  }

  /** The verb that failed. */
  public String verb() {
    return verb;
  }
}
