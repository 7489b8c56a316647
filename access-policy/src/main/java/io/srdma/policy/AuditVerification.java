package io.srdma.policy;

import java.nio.file.Path;
import java.util.Locale;

/**
 * What {@link AuditVerifier} found.
 *
 * @param intact true if every line checked chains to the one before
 * @param lines how many lines were checked
 * @param firstSeq sequence number of the first line; 1 means the chain starts at its genesis
 * @param lastSeq sequence number of the last good line
 * @param head MAC (hex) of the last good line
 * @param brokenFile the file holding the first broken line; null if intact
 * @param brokenLine 1-based line number of the first broken line in that file; 0 if intact or if
 *     the finding concerns the whole file (empty)
 * @param problem what is wrong with it, starting with the finding's name; null if intact
 * @param finding the kind of problem; null if intact
 * @param notes what was and was not checked (key, checkpoints, unsigned tail); never null
 */
public record AuditVerification(
    boolean intact,
    long lines,
    long firstSeq,
    long lastSeq,
    String head,
    Path brokenFile,
    long brokenLine,
    String problem,
    Finding finding,
    String notes) {

  /** The kinds of problem, each reported at the first line where it shows. */
  public enum Finding {
    /** A line's content differs from what was written (MAC, chain link or checkpoint digest). */
    EDITED,
    /** Lines are missing from the middle of the chain (a gap in the sequence). */
    DELETED,
    /** Lines are out of order or duplicated. */
    REORDERED,
    /** Lines were cut from the end (or a line was cut short). */
    TRUNCATED,
    /** A file's first line is not its genesis line: its oldest lines were deleted. */
    HEAD_REMOVED,
    /** A line is not an audit record of this format. */
    NOT_A_RECORD,
    /** The log was written with another audit key (or forged without one). */
    WRONG_KEY,
    /** A checkpoint's signature or signer is not valid. */
    BAD_CHECKPOINT,
    /** A file has no lines at all; every audit file starts with its genesis line. */
    EMPTY;

    /** The name used in messages, e.g. {@code head removed}. */
    public String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }
  }

  /**
   * One line for people: {@code OK ...} or {@code file:line: problem}. Characters that do not print
   * as themselves (controls, bidirectional controls, line separators), which a file name or a
   * forger's certificate may hold, are escaped ({@link Printable#escape}).
   */
  public String summary() {
    return Printable.escape(text());
  }

  private String text() {
    if (intact) {
      return "OK "
          + lines
          + " lines, seq "
          + firstSeq
          + ".."
          + lastSeq
          + (firstSeq <= 1 ? " (from genesis)" : " (earlier files not given)")
          + ", head "
          + lastSeq
          + ":"
          + head
          + (notes.isEmpty() ? "" : "; " + notes);
    }
    return brokenFile + (brokenLine > 0 ? ":" + brokenLine : "") + ": " + problem;
  }
}
