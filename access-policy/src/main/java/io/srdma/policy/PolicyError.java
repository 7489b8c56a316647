package io.srdma.policy;

/**
 * One problem found in a policy file, located by 1-based line and column. Reasons quote keys and
 * values from the file, and errors are printed to terminals and logs, so the source and the reason
 * are kept printable: a character that does not print as itself (a control, a bidirectional
 * control, a line break) is stored as a backslash, {@code u} and four hex digits.
 *
 * @param source the file name (label) the problem is in
 * @param line 1-based line
 * @param column 1-based column
 * @param reason what is wrong, for people
 */
public record PolicyError(String source, int line, int column, String reason) {
  /** Escapes what would not print as itself in the source and the reason. */
  public PolicyError {
    source = source == null ? null : Printable.escape(source);
    reason = reason == null ? null : Printable.escape(reason);
  }

  /** {@code file:line:column: reason}, the format compilers and editors understand. */
  @Override
  public String toString() {
    return source + ":" + line + ":" + column + ": " + reason;
  }
}
