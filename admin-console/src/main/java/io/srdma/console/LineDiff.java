package io.srdma.console;

import java.util.ArrayList;
import java.util.List;

/**
 * A line diff of two texts: the longest common subsequence of lines, after trimming the common head
 * and tail. Policy files are small; a middle part over {@link #MAX_CELLS} line pairs is shown as
 * all removed then all added rather than spending quadratic memory.
 */
final class LineDiff {
  static final long MAX_CELLS = 4_000_000;

  /** One line of the diff: {@code ' '} same, {@code '-'} only in the old, {@code '+'} new. */
  record Line(char op, int oldLine, int newLine, String text) {}

  private LineDiff() {}

  static List<Line> diff(String oldText, String newText) {
    String[] a = split(oldText);
    String[] b = split(newText);
    int head = 0;
    while (head < a.length && head < b.length && a[head].equals(b[head])) {
      head++;
    }
    int tail = 0;
    while (tail < a.length - head
        && tail < b.length - head
        && a[a.length - 1 - tail].equals(b[b.length - 1 - tail])) {
      tail++;
    }
    List<Line> out = new ArrayList<>();
    for (int i = 0; i < head; i++) {
      out.add(new Line(' ', i + 1, i + 1, a[i]));
    }
    int n = a.length - head - tail;
    int m = b.length - head - tail;
    if ((long) n * m > MAX_CELLS) {
      for (int i = 0; i < n; i++) {
        out.add(new Line('-', head + i + 1, 0, a[head + i]));
      }
      for (int j = 0; j < m; j++) {
        out.add(new Line('+', 0, head + j + 1, b[head + j]));
      }
    } else {
      int[][] lcs = new int[n + 1][m + 1];
      for (int i = n - 1; i >= 0; i--) {
        for (int j = m - 1; j >= 0; j--) {
          lcs[i][j] =
              a[head + i].equals(b[head + j])
                  ? lcs[i + 1][j + 1] + 1
                  : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
        }
      }
      int i = 0;
      int j = 0;
      while (i < n || j < m) {
        if (i < n && j < m && a[head + i].equals(b[head + j])) {
          out.add(new Line(' ', head + i + 1, head + j + 1, a[head + i]));
          i++;
          j++;
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
          out.add(new Line('-', head + i + 1, 0, a[head + i]));
          i++;
        } else {
          out.add(new Line('+', 0, head + j + 1, b[head + j]));
          j++;
        }
      }
    }
    for (int k = tail; k > 0; k--) {
      out.add(new Line(' ', a.length - k + 1, b.length - k + 1, a[a.length - k]));
    }
    return out;
  }

  private static String[] split(String text) {
    return text.lines().toArray(String[]::new);
  }
}
