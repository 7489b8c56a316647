package io.srdma.policy;

/**
 * Makes text safe to print: error reasons quote keys and values from files, and those reasons reach
 * terminals, log files and the console. Every character that does not print as itself is written as
 * a backslash, {@code u} and four hex digits, as in Java source (ESC becomes the six characters
 * <code>&#92;u001B</code>; one escape per UTF-16 unit): controls (C0 including tab, line feed and
 * carriage return, DEL, C1), format characters (bidirectional controls, zero-width characters,
 * byte-order marks), line and paragraph separators, unpaired surrogates and unassigned code points
 * (non-characters among them). Printable text, non-ASCII letters included, is returned unchanged; a
 * backslash already in the text is left as it is, so the result is for reading, not for parsing
 * back.
 *
 * <p>Public so that the other readers of configuration files (the serve configuration, the cluster
 * section) escape what they echo the same way. Thread safety: stateless.
 */
public final class Printable {
  private Printable() {}

  /**
   * The text with every non-printing character escaped.
   *
   * @param text any text
   * @return {@code text} itself if it prints as it is, else an escaped copy
   */
  public static String escape(String text) {
    int i = 0;
    while (i < text.length() && printable(text.codePointAt(i))) {
      i += Character.charCount(text.codePointAt(i));
    }
    if (i == text.length()) {
      return text;
    }
    StringBuilder b = new StringBuilder(text.length() + 16).append(text, 0, i);
    while (i < text.length()) {
      int cp = text.codePointAt(i);
      int end = i + Character.charCount(cp);
      if (printable(cp)) {
        b.appendCodePoint(cp);
      } else {
        for (; i < end; i++) {
          b.append(String.format("\\u%04X", (int) text.charAt(i)));
        }
      }
      i = end;
    }
    return b.toString();
  }

  private static boolean printable(int cp) {
    return switch (Character.getType(cp)) {
      case Character.CONTROL,
          Character.FORMAT,
          Character.LINE_SEPARATOR,
          Character.PARAGRAPH_SEPARATOR,
          Character.SURROGATE,
          Character.UNASSIGNED ->
          false;
      default -> true;
    };
  }
}
