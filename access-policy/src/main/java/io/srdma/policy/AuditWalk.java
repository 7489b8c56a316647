package io.srdma.policy;

import io.srdma.policy.AuditVerification.Finding;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import javax.crypto.Mac;

/**
 * One walk over an audit chain ({@link #run}), each file read once, line by line, and its state:
 * where the chain stands, what {@link AuditVerifier} compares a recorded head with, and what {@link
 * AuditLog} needs to continue the chain. Its size does not depend on the number of lines or files
 * walked. Confined to the thread that runs it.
 */
final class AuditWalk {
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
   * checkpoint that verified under the trust (a checkpoint's own line counts: its signature covers
   * all of it but its MAC); 0 if none, or without a trust.
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

  private AuditWalk() {}

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
   * Walks the chain through {@code input}, each file read once, line by line.
   *
   * @param key the audit key, or null: MACs not checked
   * @param trust who may sign checkpoints, or null
   * @param input the files, any order
   * @param expected a head recorded elsewhere, or null: noted on the way for {@link AuditVerifier}
   * @return the walk; its result says whether it was intact
   * @throws AuditException if a file cannot be read
   */
  static AuditWalk run(
      AuditKey key, AuditCheckpointTrust trust, List<Path> input, AuditVerifier.Head expected) {
    List<First> sources = new ArrayList<>(input.size());
    for (Path f : input) {
      sources.add(First.of(f));
    }
    sources.sort(Comparator.comparingLong(First::seq));
    AuditWalk w = new AuditWalk();
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
            notes(key, trust, checkpoints, signers, w));
    return w;
  }

  private static AuditWalk empty(AuditWalk w, Path file) {
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

  private static String notes(
      AuditKey key,
      AuditCheckpointTrust trust,
      long checkpoints,
      Set<String> signers,
      AuditWalk w) {
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

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
