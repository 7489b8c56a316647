package io.srdma.policy;

import java.nio.file.Path;

/**
 * What {@link AuditVerifier} found.
 *
 * @param intact true if every line checked chains to the one before
 * @param lines how many lines were checked
 * @param firstSeq sequence number of the first line; 1 means the chain starts at its genesis
 * @param lastSeq sequence number of the last good line
 * @param head SHA-256 (hex) of the last good line
 * @param brokenFile the file holding the first broken line; null if intact
 * @param brokenLine 1-based line number of the first broken line in that file; 0 if intact
 * @param problem what is wrong with it; null if intact
 */
public record AuditVerification(
    boolean intact,
    long lines,
    long firstSeq,
    long lastSeq,
    String head,
    Path brokenFile,
    long brokenLine,
    String problem) {

  /** One line for people: {@code OK ...} or {@code file:line: problem}. */
  public String summary() {
    if (intact) {
      return "OK "
          + lines
          + " lines, seq "
          + firstSeq
          + ".."
          + lastSeq
          + (firstSeq <= 1 ? " (from genesis)" : " (earlier files not given)")
          + ", head "
          + head;
    }
    return brokenFile + ":" + brokenLine + ": " + problem;
  }
}
