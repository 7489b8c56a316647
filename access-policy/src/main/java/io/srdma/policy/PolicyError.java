package io.srdma.policy;

/**
 * One problem found in a policy file, located by 1-based line and column.
 *
 * @param source the file name (label) the problem is in
 * @param line 1-based line
 * @param column 1-based column
 * @param reason what is wrong, for people
 */
public record PolicyError(String source, int line, int column, String reason) {

  /** {@code file:line:column: reason}, the format compilers and editors understand. */
  @Override
  public String toString() {
    return source + ":" + line + ":" + column + ": " + reason;
  }
}
