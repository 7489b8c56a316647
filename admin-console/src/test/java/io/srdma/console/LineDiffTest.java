package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class LineDiffTest {
  static String render(List<LineDiff.Line> lines) {
    return lines.stream().map(l -> l.op() + l.text()).collect(Collectors.joining("|"));
  }

  @Test
  void shouldShowNoChangeForEqualTexts() {
    assertEquals(" a| b", render(LineDiff.diff("a\nb\n", "a\nb\n")));
  }

  @Test
  void shouldShowAReplacedLineAsRemovedThenAdded() {
    List<LineDiff.Line> d = LineDiff.diff("a\nb\nc\n", "a\nB\nc\n");
    assertEquals(" a|-b|+B| c", render(d));
    assertEquals(new LineDiff.Line('-', 2, 0, "b"), d.get(1));
    assertEquals(new LineDiff.Line('+', 0, 2, "B"), d.get(2));
    assertEquals(new LineDiff.Line(' ', 3, 3, "c"), d.get(3));
  }

  @Test
  void shouldFindInsertionsAndDeletionsInTheMiddle() {
    assertEquals(" a|-x| b|+y| c| d", render(LineDiff.diff("a\nx\nb\nc\nd", "a\nb\ny\nc\nd")));
  }

  @Test
  void shouldHandleEmptyTextsAndWindowsLineEnds() {
    assertEquals("+a|+b", render(LineDiff.diff("", "a\nb")));
    assertEquals("-a", render(LineDiff.diff("a\n", "")));
    assertEquals(" a| b", render(LineDiff.diff("a\r\nb\r\n", "a\nb\n")));
  }

  @Test
  void shouldFallBackToReplaceAllBeyondTheSizeLimit() {
    StringBuilder a = new StringBuilder();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < 2100; i++) {
      a.append("a").append(i).append('\n');
      b.append("b").append(i).append('\n');
    }
    List<LineDiff.Line> d = LineDiff.diff(a.toString(), b.toString());
    assertEquals(4200, d.size());
    assertEquals('-', d.get(0).op());
    assertEquals('+', d.get(2100).op());
  }
}
