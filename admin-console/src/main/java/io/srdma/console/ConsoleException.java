package io.srdma.console;

/** The console could not start, or its configuration is invalid. Unchecked. */
public final class ConsoleException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what went wrong, for people
   */
  public ConsoleException(String message) {
    super(message);
  }

  /**
   * Creates an exception with a cause.
   *
   * @param message what went wrong, for people
   * @param cause the underlying failure
   */
  public ConsoleException(String message, Throwable cause) {
    super(message, cause);
  }
}
