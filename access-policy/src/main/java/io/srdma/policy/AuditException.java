package io.srdma.policy;

/**
 * The audit log could not be opened, written or read. Category {@link Category#AUDIT}. {@link
 * AuditLogLockedException} is the one subclass: another writer holds the log.
 */
public class AuditException extends PolicyException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what happened
   * @param cause the underlying failure, or null
   */
  public AuditException(String message, Throwable cause) {
    super(Category.AUDIT, message, cause);
  }
}
