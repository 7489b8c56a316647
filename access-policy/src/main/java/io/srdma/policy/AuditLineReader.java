package io.srdma.policy;

import io.srdma.keys.BoundedFileOpen;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Reads one audit file front to back, a line at a time (bytes split on {@code '\n'}), keeping at
 * most one line of at most {@code max} bytes: memory stays bounded whatever the file holds, a
 * gigabyte without a newline included. Bytes appended while it reads are read if they arrive before
 * the end is reached; a last line without its newline is {@link Kind#PARTIAL}. Only regular files
 * are opened (a link to one is followed). Errors are {@link AuditException}s naming the file. Not
 * thread-safe.
 */
final class AuditLineReader implements Closeable {
  /** What {@link #next()} found. */
  enum Kind {
    /** A whole line, its newline consumed (not part of {@link #bytes()}). */
    LINE,
    /** The last bytes of the file, with no newline after them. */
    PARTIAL,
    /** A line longer than the maximum; its bytes are not kept, the next call skips past it. */
    TOO_LONG,
    /** No more lines. */
    END
  }

  private static final int CHUNK = 64 << 10;

  private final Path file;
  private final InputStream in;
  private final int max;
  private final byte[] chunk = new byte[CHUNK];
  private int pos;
  private int limit;
  private long base;
  private boolean eof;
  private boolean skipping;
  private byte[] line = new byte[8192];
  private int length;
  private long lineNo;
  private long offset;

  private AuditLineReader(Path file, InputStream in, int max) {
    this.file = file;
    this.in = in;
    this.max = max;
  }

  /**
   * Opens a file.
   *
   * @param file the file
   * @param max the longest line, in bytes without its newline
   * @throws AuditException if it cannot be opened, or is not a regular file (a link is followed)
   */
  static AuditLineReader open(Path file, int max) {
    try {
      // a FIFO blocks the open itself, a device (/dev/zero, /dev/urandom) never ends: whoever can
      // write the log directory can put either in place of a file, before the check or after it;
      // AuditFileOpen checks the path, opens without blocking for ever, and checks what it opened
      return new AuditLineReader(
          file,
          Channels.newInputStream(AuditFileOpen.read(file, BoundedFileOpen.Links.FOLLOW)),
          max);
    } catch (IOException e) {
      throw failure(file, e);
    }
  }

  /**
   * Reads the next line.
   *
   * @return what was found; for LINE and PARTIAL, {@link #bytes()} and {@link #length()} hold it
   * @throws AuditException if the file cannot be read
   */
  Kind next() {
    while (skipping) {
      if (pos == limit && !fill()) {
        skipping = false;
        return Kind.END;
      }
      int i = indexOfNewline();
      if (i < limit) {
        pos = i + 1;
        skipping = false;
      } else {
        pos = limit;
      }
    }
    offset = base + pos;
    length = 0;
    while (true) {
      if (pos == limit && !fill()) {
        if (length == 0) {
          return Kind.END;
        }
        lineNo++;
        return Kind.PARTIAL;
      }
      int i = indexOfNewline();
      int n = i - pos;
      if (n > max - length) {
        lineNo++;
        length = 0;
        pos = i;
        skipping = true;
        return Kind.TOO_LONG;
      }
      append(n);
      if (i < limit) {
        pos = i + 1;
        lineNo++;
        return Kind.LINE;
      }
      pos = limit;
    }
  }

  /** The 1-based number of the line last returned. */
  long lineNo() {
    return lineNo;
  }

  /** The byte offset in the file of the line last returned. */
  long offset() {
    return offset;
  }

  /** How many bytes of the file were consumed so far. */
  long position() {
    return base + pos;
  }

  /** The buffer holding the line last returned, from index 0; valid until the next call. */
  byte[] bytes() {
    return line;
  }

  /** The length of the line last returned, without its newline. */
  int length() {
    return length;
  }

  /** The line last returned, ISO-8859-1. */
  String text() {
    return new String(line, 0, length, StandardCharsets.ISO_8859_1);
  }

  /** Whether the line last returned starts with {@code prefix}. */
  boolean startsWith(byte[] prefix) {
    if (length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (line[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    try {
      in.close();
    } catch (IOException e) {
      throw failure(file, e);
    }
  }

  private int indexOfNewline() {
    int i = pos;
    while (i < limit && chunk[i] != '\n') {
      i++;
    }
    return i;
  }

  private void append(int n) {
    if (length + n > line.length) {
      byte[] bigger = new byte[(int) Math.min(max, Math.max(length + n, 2L * line.length))];
      System.arraycopy(line, 0, bigger, 0, length);
      line = bigger;
    }
    System.arraycopy(chunk, pos, line, length, n);
    length += n;
  }

  /** Reads the next chunk; false at the end (then stays at the end: one pass, one snapshot). */
  private boolean fill() {
    if (eof) {
      return false;
    }
    try {
      int r = in.read(chunk, 0, CHUNK);
      base += limit;
      pos = 0;
      if (r < 0) {
        limit = 0;
        eof = true;
        return false;
      }
      limit = r;
      return true;
    } catch (IOException e) {
      throw failure(file, e);
    }
  }

  private static AuditException failure(Path file, IOException e) {
    return new AuditException("cannot read " + file + ": " + e, e);
  }
}
