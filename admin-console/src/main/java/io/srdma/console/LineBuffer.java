package io.srdma.console;

import java.nio.charset.StandardCharsets;

/**
 * One line's bytes, gathered from its end or from its start. A line over the limit (the host's
 * lines are far shorter: each field is cut to 1024 characters) is kept as a note, not its bytes.
 */
final class LineBuffer {
  private static final int INITIAL = 512;
  private final int max;
  private byte[] bytes = new byte[INITIAL];
  private int start = INITIAL; // reverse fill: bytes[start, length)
  private int end; // forward fill: bytes[0, end)
  private long length;

  LineBuffer(int max) {
    this.max = max;
  }

  void prepend(byte[] src, int off, int len) {
    length += len;
    if (len == 0 || length > max) {
      return;
    }
    int held = bytes.length - start;
    if (start < len) {
      byte[] grown = new byte[Math.min(max, Math.max(2 * bytes.length, held + len))];
      System.arraycopy(bytes, start, grown, grown.length - held, held);
      bytes = grown;
      start = grown.length - held;
    }
    start -= len;
    System.arraycopy(src, off, bytes, start, len);
  }

  void append(byte[] src, int off, int len) {
    length += len;
    if (len == 0 || length > max) {
      return;
    }
    if (bytes.length - end < len) {
      byte[] grown = new byte[Math.min(max, Math.max(2 * bytes.length, end + len))];
      System.arraycopy(bytes, 0, grown, 0, end);
      bytes = grown;
    }
    System.arraycopy(src, off, bytes, end, len);
    end += len;
  }

  /** The line gathered (ASCII, so one char per byte), and a fresh start for the next. */
  String take() {
    String s;
    if (length > max) {
      s = "(a line of " + length + " bytes, over the reader's limit of " + max + ", left out)";
    } else if (end > 0) {
      s = new String(bytes, 0, end, StandardCharsets.ISO_8859_1);
    } else {
      s = new String(bytes, start, bytes.length - start, StandardCharsets.ISO_8859_1);
    }
    if (bytes.length > 64 * INITIAL) {
      bytes = new byte[INITIAL]; // one long line does not keep its buffer
    }
    start = bytes.length;
    end = 0;
    length = 0;
    return s;
  }
}
