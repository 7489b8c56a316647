package io.srdma.cli.faults;

import java.nio.charset.StandardCharsets;

/**
 * Payloads of the fault tests: a header {@code tag seq length|} and then filler bytes that depend
 * on the sequence number, so the host can tell a whole record of one write from anything else.
 */
final class FaultPayload {
  private FaultPayload() {}

  static byte[] make(String tag, long seq, int length) {
    byte[] head = (tag + " " + seq + " " + length + "|").getBytes(StandardCharsets.US_ASCII);
    byte[] b = new byte[length];
    System.arraycopy(head, 0, b, 0, head.length);
    for (int i = head.length; i < length; i++) {
      b[i] = (byte) (seq * 31 + i);
    }
    return b;
  }

  /**
   * {@code tag seq OK} when {@code b} is exactly {@code make(tag, seq, n)}, else {@code ... BAD}.
   */
  static String describe(byte[] b) {
    int bar = -1;
    for (int i = 0; i < Math.min(b.length, 64); i++) {
      if (b[i] == '|') {
        bar = i;
        break;
      }
    }
    if (bar < 0) {
      return "? ? BAD";
    }
    String[] h = new String(b, 0, bar, StandardCharsets.US_ASCII).split(" ");
    if (h.length != 3) {
      return "? ? BAD";
    }
    try {
      long seq = Long.parseLong(h[1]);
      int length = Integer.parseInt(h[2]);
      boolean ok = java.util.Arrays.equals(b, make(h[0], seq, length));
      return h[0] + " " + seq + (ok ? " OK" : " BAD");
    } catch (NumberFormatException e) {
      return "? ? BAD";
    }
  }
}
