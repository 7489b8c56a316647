package io.srdma.policy;

/**
 * The audit log could not be opened, written or read. Category {@link Category#AUDIT}. Subclasses:
 * {@link AuditLogLockedException}, another writer holds the log; {@link AuditKeyExposedException},
 * someone else could read or replace the audit key.
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
