package io.srdma.policy;

import io.srdma.policy.AuditVerification.Finding;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks audit log files and reports the first problem, with its file and line.
 *
 * <p>Files may be given in any order (shell globs put the active file first); they are checked in
 * the order of their first sequence number, and the chain must run on across them. Always checked:
 * every line is a record, every file starts with its genesis line, sequence numbers run on without
 * gaps or steps back (a gap whose missing lines come later is reported as reordered), each {@code
 * prev} names the MAC of the line before. With the audit key: each line's HMAC, and the key id of
 * each genesis. With a {@link AuditCheckpointTrust}: each checkpoint's signature, its signer's
 * certificate, and the SHA-256 of the lines it covers. Optionally: a head recorded elsewhere must
 * be in the chain, and a stopped log must end with its close checkpoint.
 *
 * <p>A head is only evidence if the line that carries it is authenticated: anyone who can write the
 * files can end a chain of their own with a line holding the recorded {@code seq} and {@code mac}
 * (the MAC is only text without the key). So a head is checked only with the audit key, or with a
 * {@link AuditCheckpointTrust} when every line from the first one given through the head's line is
 * covered by checkpoints that verify under it; otherwise {@link #verify(Collection, Head, boolean)}
 * throws {@link UnprovenHead} rather than call the chain intact.
 *
 * <p>Each file is read front to back, a line at a time; memory does not grow with the number of
 * lines or the size of the files. A line longer than 1 MiB (1,048,576 bytes) is not a record (the
 * log's own lines are under 64 KiB). Only to name where a missing line went (reordered rather than
 * deleted) are the files read again. A file still being written is read up to where it ends when
 * reached; a last line without its newline is truncated. Thread-safe: an instance keeps no state
 * between calls.
 */
public final class AuditVerifier {
  private final AuditKey key;
  private final AuditCheckpointTrust trust;

  /**
   * A verifier.
   *
   * @param key the audit key, or null to check without it (structure and checkpoints only)
   * @param trust who may sign checkpoints, or null not to check signers against a CA
   */
  public AuditVerifier(AuditKey key, AuditCheckpointTrust trust) {
    this.key = key;
    this.trust = trust;
  }

  /**
   * Verifies files without the key or a CA: structure only (see docs/audit.md for what that does
   * not show).
   *
   * @param files the log files, any order
   * @param expectedHead must be null: without the key or a CA a head shows nothing ({@link
   *     UnprovenHead}); kept so that a malformed head is still reported as such
   * @return the result
   * @throws AuditException if a file cannot be read
   * @throws PolicyException of category ILLEGAL_ARGUMENT if {@code expectedHead} is malformed, or
   *     {@link UnprovenHead} if it is given at all
   */
  public static AuditVerification verify(Collection<Path> files, String expectedHead) {
    return new AuditVerifier(null, null)
        .verify(files, expectedHead == null ? null : Head.parse(expectedHead), false);
  }

  /**
   * Verifies files.
   *
   * <p>With {@code expectedHead} and no audit key: a chain whose head line is not covered by
   * checkpoints that verify under the trust (every line from the first given through it) is not
   * called intact, and neither is one checked without a trust at all: {@link UnprovenHead} is
   * thrown instead. A problem the walk or the head comparison finds is still reported as such.
   *
   * @param files the log files, any order
   * @param expectedHead a head recorded elsewhere, or null
   * @param closed the writer has stopped: the chain must end with a close checkpoint
   * @return the result
   * @throws AuditException if a file cannot be read
   * @throws UnprovenHead if {@code expectedHead} is given without the audit key and the head line
   *     is not covered by checkpoints that verify under the trust
   */
  public AuditVerification verify(Collection<Path> files, Head expectedHead, boolean closed) {
    if (files.isEmpty()) {
      throw new PolicyException(PolicyException.Category.ILLEGAL_ARGUMENT, "no files to verify");
    }
    if (expectedHead != null && key == null && trust == null) {
      throw new UnprovenHead(
          "a recorded head cannot be checked without the audit key: anyone who can write the"
              + " files can end a forged chain with a line carrying the head's seq and MAC, which"
              + " only the key (or checkpoints signed by a host of the CA, with a CA) can tell"
              + " from the real one",
          0);
    }
    AuditWalk w = AuditWalk.run(key, trust, new ArrayList<>(files), expectedHead);
    if (!w.result.intact()) {
      return w.result;
    }
    if (closed && !w.lastIsClose) {
      return w.broken(
          w.lastFile,
          w.lastLineNo,
          Finding.TRUNCATED,
          "the log ends at seq "
              + w.lastSeq
              + (w.lastCheckpointSeq == 0
                  ? " and has no checkpoint"
                  : ", "
                      + (w.lastSeq - w.lastCheckpointSeq)
                      + " line(s) after its last checkpoint (seq "
                      + w.lastCheckpointSeq
                      + ")")
              + ", not with a close checkpoint: lines were cut from the end, or the writer did"
              + " not stop cleanly");
    }
    if (expectedHead != null) {
      AuditVerification h = checkHead(w, expectedHead);
      if (h != null) {
        return h;
      }
      if (key == null) {
        long headSeq = expectedHead.seq() > 0 ? expectedHead.seq() : w.headMacSeq;
        if (headSeq > w.signedThrough) {
          throw new UnprovenHead(
              "the recorded head (seq "
                  + headSeq
                  + ") is in the chain, but without the audit key that shows nothing unless"
                  + " checkpoints that verify under the CA cover every line through it, and "
                  + (w.signedThrough == 0
                      ? "none covers the first line given"
                      : "they cover only seq " + w.firstSeq + ".." + w.signedThrough)
                  + ": anyone who can write the files can end a forged chain with a line carrying"
                  + " the head's seq and MAC",
              w.signedThrough);
        }
      }
    }
    return w.result;
  }

  /**
   * A head was given, but what it would be compared with is not authenticated: no audit key, and no
   * checkpoint verified under the trust covers the head's line (or no trust). Not a finding about
   * the log: the check asked for cannot be made with what was given.
   */
  public static final class UnprovenHead extends PolicyException {
    private static final long serialVersionUID = 1L;

    private final long signedThrough;

    UnprovenHead(String message, long signedThrough) {
      super(PolicyException.Category.ILLEGAL_ARGUMENT, message);
      this.signedThrough = signedThrough;
    }

    /**
     * The last seq through which every line given is covered by checkpoints verified under the
     * trust; 0 if none (or no trust).
     */
    public long signedThrough() {
      return signedThrough;
    }
  }

  private static AuditVerification checkHead(AuditWalk w, Head expected) {
    if (expected.seq() > 0) {
      if (expected.seq() > w.lastSeq) {
        return w.broken(
            w.lastFile,
            w.lastLineNo,
            Finding.TRUNCATED,
            "the chain ends at seq "
                + w.lastSeq
                + " but the recorded head is seq "
                + expected.seq()
                + ": "
                + (expected.seq() - w.lastSeq)
                + " line(s) cut from the end");
      }
      if (expected.seq() < w.firstSeq) {
        return w.broken(
            w.firstFile,
            1,
            Finding.HEAD_REMOVED,
            "the recorded head is seq "
                + expected.seq()
                + ", before the first line given (seq "
                + w.firstSeq
                + "): give the older files, or they were deleted");
      }
      String mac = w.macAtHeadSeq;
      if (!MessageDigest.isEqual(ascii(expected.mac()), ascii(mac == null ? "" : mac))) {
        return w.broken(
            w.lastFile,
            w.lastLineNo,
            Finding.EDITED,
            "line seq "
                + expected.seq()
                + " has MAC "
                + mac
                + ", not the recorded head "
                + expected.mac()
                + ": the log was edited or replaced");
      }
      return null;
    }
    if (!w.headMacSeen) {
      return w.broken(
          w.lastFile,
          w.lastLineNo,
          Finding.TRUNCATED,
          "the recorded head "
              + expected.mac()
              + " is not in the chain (which ends at seq "
              + w.lastSeq
              + "): lines cut from the end, the last line edited, or the log replaced");
    }
    return null;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * A head recorded elsewhere: a line's MAC, and optionally its sequence number.
   *
   * @param seq the sequence number, or 0 if not known
   * @param mac the MAC, 64 lowercase hex digits
   */
  public record Head(long seq, String mac) {
    private static final Pattern FORMAT =
        Pattern.compile("(?:([1-9][0-9]{0,17}):)?([0-9a-fA-F]{64})");

    /**
     * Parses {@code MAC} or {@code SEQ:MAC} (64 hex digits; the summary of verify prints {@code
     * head SEQ:MAC}).
     *
     * @param text the argument
     * @return the head
     * @throws PolicyException of category ILLEGAL_ARGUMENT if malformed
     */
    public static Head parse(String text) {
      Matcher m = FORMAT.matcher(text == null ? "" : text.trim());
      if (!m.matches()) {
        throw new PolicyException(
            PolicyException.Category.ILLEGAL_ARGUMENT,
            "a head is 64 hex digits, optionally preceded by its sequence number and ':' (got '"
                + (text == null ? "" : text.length() > 80 ? text.substring(0, 80) + "..." : text)
                + "')");
      }
      return new Head(
          m.group(1) == null ? 0 : Long.parseLong(m.group(1)), m.group(2).toLowerCase(Locale.ROOT));
    }
  }
}
