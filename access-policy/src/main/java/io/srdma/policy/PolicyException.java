package io.srdma.policy;

/**
 * Root of every exception this module throws. Unchecked; the {@link Category} tells a caller what
 * went wrong without parsing messages.
 */
public class PolicyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What kind of failure an exception reports. */
  public enum Category {
    /** A policy file or policy object was rejected; nothing changed. */
    INVALID_POLICY,
    /** The audit log could not be written, opened or read. */
    AUDIT,
    /** A file or watch operation failed. */
    IO,
    /** An argument broke an API contract. */
    ILLEGAL_ARGUMENT,
    /** The object was used after close. */
    CLOSED
  }

  private final Category category;

  /**
   * Creates an exception.
   *
   * @param category what kind of failure
   * @param message what happened, for people
   */
  public PolicyException(Category category, String message) {
    super(message);
    this.category = category;
  }

  /**
   * Creates an exception with a cause.
   *
   * @param category what kind of failure
   * @param message what happened, for people
   * @param cause the underlying failure
   */
  public PolicyException(Category category, String message, Throwable cause) {
    super(message, cause);
    this.category = category;
  }

  /** What kind of failure this is. */
  public Category category() {
    return category;
  }
}
