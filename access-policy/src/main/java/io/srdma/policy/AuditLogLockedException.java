package io.srdma.policy;

import java.nio.file.Path;

/**
 * The audit log is already open for writing: another process (a second {@code srdma serve} with the
 * same configuration) or another {@link AuditLog} in this one holds its lock file. Nothing was
 * written: neither the log, nor its key, nor a checkpoint.
 */
public final class AuditLogLockedException extends AuditException {
  private static final long serialVersionUID = 1L;

  private final String lockFile;

  AuditLogLockedException(Path log, Path lockFile, String holder) {
    super(
        "audit log "
            + log
            + " is already open for writing by "
            + holder
            + " (it holds the lock on "
            + lockFile
            + "); a second writer would fork the chain. Stop the other srdma serve or give this"
            + " one another audit.file",
        null);
    this.lockFile = lockFile.toString();
  }

  /** The lock file another writer holds. */
  public Path lockFile() {
    return Path.of(lockFile);
  }
}
