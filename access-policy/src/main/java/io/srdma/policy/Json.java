package io.srdma.policy;

/**
 * Writes JSON strings. Everything outside printable ASCII is escaped as {@code \}{@code uXXXX}, one
 * UTF-16 unit at a time, so any Java string (even with unpaired surrogates) yields one valid ASCII
 * line that decodes back to the same string.
 */
final class Json {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Json() {}

  static void string(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0, n = s.length(); i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20 || c >= 0x7f) {
            b.append("\\u")
                .append(HEX[(c >> 12) & 0xf])
                .append(HEX[(c >> 8) & 0xf])
                .append(HEX[(c >> 4) & 0xf])
                .append(HEX[c & 0xf]);
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }
}
