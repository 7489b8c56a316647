package io.srdma.channel.record;

/** Misuse of the record layer (slow path). Failures to open a record are {@link OpenResult}s. */
public final class RecordException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why. */
  public enum Reason {
    /** A bad argument. */
    BAD_ARGUMENT,
    /** The keys were closed. */
    KEYS_CLOSED
  }

  private final Reason reason;

  RecordException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  RecordException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** The category. */
  public Reason reason() {
    return reason;
  }
}
