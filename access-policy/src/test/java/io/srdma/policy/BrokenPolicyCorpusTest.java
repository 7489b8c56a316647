package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every file under {@code broken/} declares the errors it must produce as {@code # expect:
 * LINE:COLUMN reason-substring} lines; the loader must report exactly those positions.
 */
class BrokenPolicyCorpusTest {
  private static final Pattern EXPECT = Pattern.compile("# expect: (\\d+):(\\d+) (.+)");

  static Stream<Path> corpus() throws IOException, URISyntaxException {
    Path dir = Path.of(BrokenPolicyCorpusTest.class.getResource("broken").toURI());
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(files::add);
    }
    return files.stream();
  }

  @Test
  void shouldHaveACorpus() throws Exception {
    assertTrue(corpus().count() >= 14);
  }

  @ParameterizedTest
  @MethodSource("corpus")
  void shouldReportExactlyTheExpectedPositions(Path file) throws IOException {
    List<String[]> expected = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      Matcher m = EXPECT.matcher(line);
      if (m.matches()) {
        expected.add(new String[] {m.group(1) + ":" + m.group(2), m.group(3)});
      }
    }
    assertFalse(expected.isEmpty(), "corpus file declares no expectation: " + file);

    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().load(file));

    List<PolicyError> actual = new ArrayList<>(e.errors());
    String all = e.getMessage();
    for (String[] exp : expected) {
      PolicyError hit =
          actual.stream()
              .filter(a -> (a.line() + ":" + a.column()).equals(exp[0]))
              .filter(a -> a.reason().contains(exp[1]))
              .findFirst()
              .orElse(null);
      assertTrue(hit != null, "expected " + exp[0] + " " + exp[1] + " in:\n" + all);
      actual.remove(hit);
      assertTrue(hit.toString().startsWith(file + ":" + exp[0] + ": "), hit.toString());
    }
    assertEquals(List.of(), actual, "unexpected errors in:\n" + all);
  }
}
