package io.srdma.policy;

import io.srdma.policy.AuditVerification.Finding;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;

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
    Walk w = walk(new ArrayList<>(files), expectedHead);
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

  private static AuditVerification checkHead(Walk w, Head expected) {
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

  /** A file and what its first line says (read alone, to put the files in order). */
  private record First(Path file, long seq, boolean empty) {
    static First of(Path file) {
      try (AuditLineReader r = AuditLineReader.open(file, AuditLine.MAX_BYTES)) {
        AuditLineReader.Kind k = r.next();
        AuditLine l =
            k == AuditLineReader.Kind.LINE || k == AuditLineReader.Kind.PARTIAL
                ? AuditLine.parse(r.text())
                : null;
        return new First(file, l == null ? Long.MAX_VALUE : l.seq, k == AuditLineReader.Kind.END);
      }
    }
  }

  /** One line's place. */
  private record Loc(Path file, long line) {}

  /**
   * The state of one walk over the chain; also what {@link AuditLog} needs to continue it. Its size
   * does not depend on the number of lines or files walked.
   */
  static final class Walk {
    AuditVerification result;

    /**
     * The SHA-256 of the last file's bytes from {@link #coverOffset} to its end: what the next
     * checkpoint continues (valid when the walk is intact).
     */
    MessageDigest cover;

    /** Byte offset, in the last file, of the first line the next checkpoint must cover. */
    long coverOffset;

    /** How many bytes of the last file were read. */
    long lastFileBytes;

    long coverFrom;
    long pending;
    boolean lastIsClose;
    long lines;
    long firstSeq;
    long lastSeq;
    String head;
    Path firstFile;
    Path lastFile;
    long lastLineNo;
    long lastCheckpointSeq;
    boolean restarted;

    /** The sequence number of the last {@code continued} genesis line walked, or 0. */
    long continuedAt;

    /** How many {@code continued} genesis lines were walked. */
    long continuedCount;

    /** The MAC of the line at the expected head's seq, if one was given with its seq. */
    String macAtHeadSeq;

    /** Whether a line had the expected head's MAC, if one was given without its seq. */
    boolean headMacSeen;

    /** The seq of the first line with the expected head's MAC, if one was given without its seq. */
    long headMacSeq;

    /**
     * The last seq such that every line from the first one walked through it is covered by a
     * checkpoint that verified under the trust (a checkpoint's own line counts: its signature
     * covers all of it but its MAC); 0 if none, or without a trust.
     */
    long signedThrough;

    /** A line no such checkpoint covers ended a file (lines after its last checkpoint). */
    boolean unsignedGap;

    AuditVerification broken(Path file, long line, Finding finding, String problem) {
      result =
          new AuditVerification(
              false,
              lines,
              firstSeq,
              lastSeq,
              head,
              file,
              line,
              finding.label() + ": " + problem,
              finding,
              "");
      return result;
    }
  }

  /**
   * Walks the chain through {@code input}, each file read once, line by line.
   *
   * @param input the files, any order
   * @param expected a head recorded elsewhere, or null: noted on the way for {@link #checkHead}
   * @return the walk; its result says whether it was intact
   * @throws AuditException if a file cannot be read
   */
  Walk walk(List<Path> input, Head expected) {
    List<First> sources = new ArrayList<>(input.size());
    for (Path f : input) {
      sources.add(First.of(f));
    }
    sources.sort(Comparator.comparingLong(First::seq));
    Walk w = new Walk();
    w.head = AuditLog.GENESIS;
    for (First s : sources) {
      if (s.empty()) {
        return empty(w, s.file());
      }
    }
    Mac mac = key == null ? null : key.newMac();
    MessageDigest cover = AuditLog.newSha256();
    w.cover = cover;
    CertificateFactory cf;
    try {
      cf = CertificateFactory.getInstance("X.509");
    } catch (CertificateException e) {
      throw new IllegalStateException("X.509 is required of every JVM", e);
    }
    Set<String> signers = new LinkedHashSet<>();
    long checkpoints = 0;
    w.firstFile = sources.get(0).file();
    String prevMac = null;
    Path prevFile = null;
    long prevLineNo = 0;
    for (First source : sources) {
      Path file = source.file();
      try (AuditLineReader r = AuditLineReader.open(file, AuditLine.MAX_BYTES)) {
        for (AuditLineReader.Kind k = r.next(); k != AuditLineReader.Kind.END; k = r.next()) {
          long lineNo = r.lineNo();
          if (k == AuditLineReader.Kind.TOO_LONG) {
            w.broken(
                file,
                lineNo,
                Finding.NOT_A_RECORD,
                "the line is longer than "
                    + AuditLine.MAX_BYTES
                    + " bytes, the most an audit line may be (the log writes lines under 64 KiB):"
                    + " garbage, or not an audit log");
            return w;
          }
          if (k == AuditLineReader.Kind.PARTIAL) {
            w.broken(file, lineNo, Finding.TRUNCATED, "the last line has no end of line");
            return w;
          }
          String raw = r.text();
          AuditLine l = AuditLine.parse(raw);
          if (l == null) {
            w.broken(
                file,
                lineNo,
                Finding.NOT_A_RECORD,
                "not an audit record of this format (cut, edited, or written by an older version"
                    + " without MACs)");
            return w;
          }
          if (lineNo == 1 && !l.isGenesis()) {
            w.broken(
                file,
                lineNo,
                Finding.HEAD_REMOVED,
                "the file's first line is seq "
                    + l.seq
                    + " ("
                    + l.action
                    + "), not its genesis line: its oldest lines were deleted");
            return w;
          }
          if (lineNo > 1 && l.isGenesis()) {
            w.broken(
                file,
                lineNo,
                Finding.REORDERED,
                "a genesis line inside a file: lines moved, or files spliced together");
            return w;
          }
          boolean first = w.lines == 0;
          if (first) {
            w.firstSeq = l.seq;
            if (l.seq == 1 && !l.prev.equals(AuditLog.GENESIS)) {
              w.broken(file, lineNo, Finding.EDITED, "seq 1 must have prev = 64 zeros");
              return w;
            }
          } else {
            long expectedSeq = w.lastSeq + 1;
            if (l.seq < expectedSeq) {
              w.broken(
                  file,
                  lineNo,
                  Finding.REORDERED,
                  "seq " + l.seq + " after seq " + w.lastSeq + ": lines reordered or duplicated");
              return w;
            }
            if (l.seq > expectedSeq) {
              // only now look for the missing line: a second pass, on the failure path alone
              Loc missing = find(sources, expectedSeq);
              if (missing != null) {
                w.broken(
                    file,
                    lineNo,
                    Finding.REORDERED,
                    "seq "
                        + l.seq
                        + " where seq "
                        + expectedSeq
                        + " was expected; seq "
                        + expectedSeq
                        + " is at "
                        + missing.file()
                        + ":"
                        + missing.line());
                return w;
              }
              w.broken(
                  file,
                  lineNo,
                  Finding.DELETED,
                  "seq "
                      + l.seq
                      + " after seq "
                      + w.lastSeq
                      + ": "
                      + (l.seq - expectedSeq)
                      + " line(s) deleted before this one"
                      + (lineNo == 1 ? " (the end of the previous file, or a whole file)" : ""));
              return w;
            }
          }
          if (l.isGenesis()) {
            Matcher g = AuditLine.GENESIS.matcher(raw);
            if (!g.matches()) {
              w.broken(file, lineNo, Finding.NOT_A_RECORD, "malformed genesis line");
              return w;
            }
            if (first && "restarted".equals(g.group(1))) {
              w.restarted = true;
            }
            if ("continued".equals(g.group(1))) {
              w.continuedAt = l.seq;
              w.continuedCount++;
            }
            if (mac != null && !g.group(2).equals(key.id())) {
              w.broken(
                  file,
                  lineNo,
                  Finding.WRONG_KEY,
                  "written with audit key id "
                      + g.group(2)
                      + ", not "
                      + key.id()
                      + ": forged without the key, or the wrong key file");
              return w;
            }
          }
          if (mac != null) {
            String expectedMac =
                HexFormat.of()
                    .formatHex(mac.doFinal(l.macInput().getBytes(StandardCharsets.ISO_8859_1)));
            if (!MessageDigest.isEqual(ascii(expectedMac), ascii(l.mac))) {
              w.broken(
                  file,
                  lineNo,
                  Finding.EDITED,
                  "its MAC does not match: the line was altered, or written without the audit"
                      + " key");
              return w;
            }
          }
          if (!first && !l.prev.equals(prevMac)) {
            if (mac != null || lineNo == 1) {
              w.broken(
                  file,
                  lineNo,
                  Finding.EDITED,
                  "prev does not name the MAC of the line before (seq "
                      + w.lastSeq
                      + "): lines from another chain spliced in, or that line's MAC edited");
            } else {
              w.broken(
                  prevFile,
                  prevLineNo,
                  Finding.EDITED,
                  "its MAC no longer matches the prev of the next line (seq " + l.seq + ")");
            }
            return w;
          }
          if (l.isGenesis()) {
            if (!first && w.pending > 0) {
              w.unsignedGap = true; // the previous file ended with lines no checkpoint covers
            }
            cover.reset();
            w.coverFrom = l.seq;
            w.coverOffset = r.offset();
            w.pending = 0;
            w.lastCheckpointSeq = 0;
          } else if (l.isCheckpoint()) {
            String problem =
                AuditCheckpointLine.problem(raw, l, cover, w.coverFrom, cf, trust, signers);
            if (problem != null) {
              boolean digest = problem.startsWith("lines ");
              w.broken(file, lineNo, digest ? Finding.EDITED : Finding.BAD_CHECKPOINT, problem);
              return w;
            }
            checkpoints++;
            if (trust != null && !w.unsignedGap) {
              w.signedThrough = l.seq;
            }
            cover.reset();
            w.coverFrom = l.seq;
            w.coverOffset = r.offset();
            w.pending = -1;
            w.lastCheckpointSeq = l.seq;
          }
          cover.update(r.bytes(), 0, r.length());
          cover.update((byte) '\n');
          w.pending++;
          w.lastIsClose = l.isCheckpoint() && raw.contains("\"reason\":\"close\"");
          w.lines++;
          w.lastSeq = l.seq;
          w.head = l.mac;
          if (expected != null) {
            if (expected.seq() == l.seq) {
              w.macAtHeadSeq = l.mac;
            } else if (expected.seq() == 0 && !w.headMacSeen && l.mac.equals(expected.mac())) {
              w.headMacSeen = true;
              w.headMacSeq = l.seq;
            }
          }
          w.lastFile = file;
          w.lastLineNo = lineNo;
          prevMac = l.mac;
          prevFile = file;
          prevLineNo = lineNo;
        }
        if (r.position() == 0) {
          return empty(w, file); // emptied since its first line was read
        }
        w.lastFileBytes = r.position();
      }
    }
    w.result =
        new AuditVerification(
            true,
            w.lines,
            w.firstSeq,
            w.lastSeq,
            w.head,
            null,
            0,
            null,
            null,
            notes(checkpoints, signers, w));
    return w;
  }

  private static Walk empty(Walk w, Path file) {
    w.broken(
        file,
        0,
        Finding.EMPTY,
        "the file has no lines; every audit file starts with its genesis line (emptied, or"
            + " not an audit log)");
    return w;
  }

  /**
   * Where the first line with sequence number {@code seq} is, reading the files again (in walk
   * order); null if none. Lines longer than the maximum are skipped, a last line without its
   * newline counts.
   */
  private static Loc find(List<First> sources, long seq) {
    byte[] prefix = ("{\"seq\":" + seq + ",").getBytes(StandardCharsets.US_ASCII);
    for (First s : sources) {
      try (AuditLineReader r = AuditLineReader.open(s.file(), AuditLine.MAX_BYTES)) {
        for (AuditLineReader.Kind k = r.next(); k != AuditLineReader.Kind.END; k = r.next()) {
          if (k != AuditLineReader.Kind.TOO_LONG && r.startsWith(prefix)) {
            AuditLine l = AuditLine.parse(r.text());
            if (l != null && l.seq == seq) {
              return new Loc(s.file(), r.lineNo());
            }
          }
        }
      }
    }
    return null;
  }

  private String notes(long checkpoints, Set<String> signers, Walk w) {
    StringBuilder b = new StringBuilder();
    b.append(
        key == null
            ? "MACs not checked (no audit key)"
            : "MACs checked with audit key " + key.id());
    if (checkpoints == 0) {
      b.append("; no checkpoints");
    } else {
      b.append("; ").append(checkpoints).append(" checkpoint(s) signed by ").append(signers);
      b.append(
          trust == null
              ? ", signers not checked against a CA"
              : ", valid under CA " + trust.caName());
    }
    if (w.restarted) {
      b.append(
          "; the chain restarted at seq 1 while its audit key already existed: earlier log files"
              + " were moved or deleted");
    }
    if (w.continuedCount > 0) {
      b.append("; the chain continued at seq ")
          .append(w.continuedAt)
          .append(w.continuedCount > 1 ? " (and " + (w.continuedCount - 1) + " more time(s))" : "")
          .append(
              " from the last line of the previous (rotated) file, the active file having been"
                  + " lost or deleted: lines written after that one are gone (check with --head or"
                  + " --cluster)");
    }
    long unsigned = w.lastCheckpointSeq == 0 ? w.lines : w.lastSeq - w.lastCheckpointSeq;
    if (unsigned > 0 && checkpoints > 0) {
      b.append("; ").append(unsigned).append(" line(s) after the last checkpoint not yet signed");
    }
    return b.toString();
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
