package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** What {@link Printable} escapes and what it leaves, and that every error record applies it. */
class PrintableTest {
  @Test
  void shouldEscapeWhatDoesNotPrintAsItself() {
    assertEquals("a\\u001B[2Jb", Printable.escape("a\u001b[2Jb"));
    assertEquals(
        "\\u0000\\u0007\\u0009\\u000A\\u000D\\u007F\\u0085",
        Printable.escape("\0\u0007\t\n\r\u007f\u0085"));
    assertEquals(
        "\\u202E\\u2066\\u061C\\u200B\\uFEFF\\u2028\\u2029",
        Printable.escape("\u202e\u2066\u061c\u200b\ufeff\u2028\u2029"));
    // unpaired surrogates, non-characters, a supplementary format character (a tag letter)
    assertEquals("\\uD800x\\uDC00\\uFFFF\\uFDD0", Printable.escape("\ud800x\udc00\uffff\ufdd0"));
    assertEquals("a\\uDB40\\uDC41", Printable.escape("a" + new String(Character.toChars(0xE0041))));
    String printable = "café 名前 \uD83D\uDE00 a\\b 'q' \u00a0";
    assertSame(printable, Printable.escape(printable));
  }

  @Test
  void shouldKeepEveryErrorRecordPrintable() {
    // whoever builds an error, the stored reason and source are printable
    PolicyError error = new PolicyError("p\u001b.yaml", 1, 1, "bad '\u202e\n'");
    assertEquals("p\\u001B.yaml:1:1: bad '\\u202E\\u000A'", error.toString());
    assertEquals("x\\u0007", new BoundedYaml.Problem(1, 1, "x\u0007", false).reason());
  }
}
