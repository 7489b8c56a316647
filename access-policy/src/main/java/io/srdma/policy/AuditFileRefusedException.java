package io.srdma.policy;

import java.nio.file.Path;
import java.time.Duration;

/**
 * An audit file (the log, a rotated file, the lock file, the audit key, a file given to verify) was
 * refused because of what is at its path, not because of what it holds: whoever can write its
 * directory may put a link, a FIFO or a device there, or swap the file between its check and its
 * open. {@link #reason()} says what was found; nothing was read from or written to it.
 */
public final class AuditFileRefusedException extends AuditException {
  private static final long serialVersionUID = 1L;

  /** What was found at the path. */
  public enum Reason {
    /** A symbolic link where links are not followed (the log, its rotated files, the lock). */
    LINK,
    /** A FIFO, a socket, a device or a directory: not a regular file. */
    NOT_REGULAR,
    /** Another file than the one checked was there when it was opened (or right after). */
    REPLACED,
    /** The open did not complete in time: a FIFO with nobody at its other end, most likely. */
    BLOCKED
  }

  private final String file;
  private final Reason reason;

  private AuditFileRefusedException(Path file, Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.file = file.toString();
    this.reason = reason;
  }

  static AuditFileRefusedException link(Path file) {
    return new AuditFileRefusedException(
        file,
        Reason.LINK,
        file + ": not a regular file (a symbolic link): refused, links are not followed here",
        null);
  }

  static AuditFileRefusedException notRegular(Path file, String what) {
    return new AuditFileRefusedException(
        file, Reason.NOT_REGULAR, file + ": not a regular file (" + what + "): refused", null);
  }

  static AuditFileRefusedException replaced(Path file, String what, Throwable cause) {
    return new AuditFileRefusedException(
        file,
        Reason.REPLACED,
        file
            + " changed between its check and its open ("
            + what
            + "): put there by someone who can write its directory, or rotated meanwhile;"
            + " refused unused (retry, and look at the directory if it happens again)",
        cause);
  }

  static AuditFileRefusedException blocked(Path file, Duration waited) {
    return new AuditFileRefusedException(
        file,
        Reason.BLOCKED,
        file
            + ": its open blocked (given up after "
            + waited.toMillis()
            + " ms): a FIFO put in its place by someone who can write its directory?; refused",
        null);
  }

  /** The file refused, as it was named. */
  public Path file() {
    return Path.of(file);
  }

  /** What was found there. */
  public Reason reason() {
    return reason;
  }
}
