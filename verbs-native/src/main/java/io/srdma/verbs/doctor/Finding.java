package io.srdma.verbs.doctor;

/**
 * One thing the doctor noticed.
 *
 * @param severity how bad it is
 * @param subject what it is about ({@code "rxe0 port 1"}, {@code "memlock"}, ...)
 * @param message what is wrong, in words
 * @param fix the command (or file edit) that fixes it; empty when nothing needs doing
 */
public record Finding(Severity severity, String subject, String message, String fix) {
  /** How bad a finding is. Only {@link #ERROR} makes the doctor exit non-zero. */
  public enum Severity {
    /** A fact worth knowing; nothing to do. */
    NOTE,
    /** Works, but slower or weaker than it could be. */
    WARN,
    /** A present device or library is misconfigured: RDMA through it will fail. */
    ERROR
  }

  static Finding note(String subject, String message) {
    return new Finding(Severity.NOTE, subject, message, "");
  }

  static Finding warn(String subject, String message, String fix) {
    return new Finding(Severity.WARN, subject, message, fix);
  }

  static Finding error(String subject, String message, String fix) {
    return new Finding(Severity.ERROR, subject, message, fix);
  }
}
