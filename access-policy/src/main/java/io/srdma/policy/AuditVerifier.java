package io.srdma.policy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Matcher;

/**
 * Checks the hash chain of audit log files and reports the first broken line.
 *
 * <p>Files may be given in any order (shell globs put the active file first); they are checked in
 * the order of their first sequence number, and the chain must run on across them. What shows: an
 * edited line (its successor's {@code prev} no longer matches; the edited line is reported), a
 * deleted or reordered line (a gap or step back in {@code seq}), a truncated line (no end of line
 * or not an audit record). Deleting whole lines from the end leaves a shorter valid chain: compare
 * the reported head with one recorded elsewhere ({@code expectedHead}).
 */
public final class AuditVerifier {
  private AuditVerifier() {}

  /**
   * Verifies files.
   *
   * @param files the log files, any order
   * @param expectedHead the head hash recorded elsewhere, or null to skip that check
   * @return the result
   * @throws AuditException if a file cannot be read
   */
  public static AuditVerification verify(Collection<Path> files, String expectedHead) {
    List<Segment> segments = new ArrayList<>();
    for (Path f : files) {
      try {
        segments.add(new Segment(f, Files.readAllBytes(f)));
      } catch (IOException e) {
        throw new AuditException("cannot read " + f + ": " + e, e);
      }
    }
    segments.sort(Comparator.comparingLong(Segment::firstSeq));
    MessageDigest sha = AuditLog.newSha256();
    long lines = 0;
    long firstSeq = 0;
    long lastSeq = 0;
    String head = AuditLog.GENESIS;
    int prevLineNo = 0;
    Path prevFile = null;
    for (Segment s : segments) {
      byte[] d = s.data;
      int lineNo = 0;
      int start = 0;
      while (start < d.length) {
        lineNo++;
        int end = start;
        while (end < d.length && d[end] != '\n') {
          end++;
        }
        if (end == d.length) {
          return broken(
              lines,
              firstSeq,
              lastSeq,
              head,
              s.file,
              lineNo,
              "truncated: the last line has no end of line");
        }
        String line = new String(d, start, end - start, StandardCharsets.ISO_8859_1);
        Matcher m = AuditLog.LINE_HEAD.matcher(line);
        if (!m.find() || !line.endsWith("}")) {
          return broken(
              lines,
              firstSeq,
              lastSeq,
              head,
              s.file,
              lineNo,
              "not an audit record (truncated or edited)");
        }
        long seq = Long.parseLong(m.group(1));
        String prev = m.group(2);
        if (lines == 0) {
          firstSeq = seq;
          if (seq == 1 && !prev.equals(AuditLog.GENESIS)) {
            return broken(
                lines, firstSeq, lastSeq, head, s.file, lineNo, "seq 1 must have prev = 64 zeros");
          }
        } else if (seq <= lastSeq) {
          return broken(
              lines,
              firstSeq,
              lastSeq,
              head,
              s.file,
              lineNo,
              "seq " + seq + " after seq " + lastSeq + ": lines reordered or duplicated");
        } else if (seq != lastSeq + 1) {
          return broken(
              lines,
              firstSeq,
              lastSeq,
              head,
              s.file,
              lineNo,
              "seq "
                  + seq
                  + " after seq "
                  + lastSeq
                  + ": "
                  + (seq - lastSeq - 1)
                  + " line(s) deleted before this one");
        } else if (!prev.equals(head)) {
          return broken(
              lines - 1,
              firstSeq,
              lastSeq - 1,
              null,
              prevFile,
              prevLineNo,
              "edited: its SHA-256 no longer matches the prev of the next line (seq " + seq + ")");
        }
        lines++;
        lastSeq = seq;
        head = HexFormat.of().formatHex(sha.digest(line.getBytes(StandardCharsets.ISO_8859_1)));
        prevLineNo = lineNo;
        prevFile = s.file;
        start = end + 1;
      }
    }
    if (expectedHead != null && !expectedHead.equalsIgnoreCase(head)) {
      return broken(
          lines,
          firstSeq,
          lastSeq,
          head,
          prevFile,
          prevLineNo,
          "head "
              + head
              + " is not the expected "
              + expectedHead
              + ": lines deleted from the end, or the last line edited");
    }
    return new AuditVerification(true, lines, firstSeq, lastSeq, head, null, 0, null);
  }

  private static AuditVerification broken(
      long lines, long firstSeq, long lastSeq, String head, Path file, long line, String problem) {
    return new AuditVerification(false, lines, firstSeq, lastSeq, head, file, line, problem);
  }

  private static final class Segment {
    final Path file;
    final byte[] data;

    Segment(Path file, byte[] data) {
      this.file = file;
      this.data = data;
    }

    long firstSeq() {
      int end = 0;
      while (end < data.length && data[end] != '\n') {
        end++;
      }
      Matcher m = AuditLog.LINE_HEAD.matcher(new String(data, 0, end, StandardCharsets.ISO_8859_1));
      return m.find() ? Long.parseLong(m.group(1)) : Long.MAX_VALUE;
    }
  }
}
