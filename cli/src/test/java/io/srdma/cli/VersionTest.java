package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** {@code srdma -V}: the build's version and commit, from the filtered version.properties. */
class VersionTest {
  /** The version the build was made with, as Maven passes it to the test JVM's classpath. */
  private static Properties built() throws IOException {
    Properties p = new Properties();
    try (InputStream in = SrdmaCommand.class.getResourceAsStream(SrdmaCommand.Version.RESOURCE)) {
      assertTrue(in != null, "version.properties missing from the build");
      p.load(in);
    }
    return p;
  }

  @Test
  void shouldPrintTheBuildVersionAndCommitForBothFlags() throws Exception {
    Properties p = built();
    // resource filtering ran: the pom's version, not a placeholder
    assertTrue(p.getProperty("version").matches("\\d+\\.\\d+\\.\\d+.*"), p.toString());
    String commit = p.getProperty("commit");
    assertTrue(commit.equals("unknown") || commit.matches("[0-9a-f]{7,40}"), commit);
    for (String[] args :
        new String[][] {{"-V"}, {"--version"}, {"bench", "-V"}, {"cert", "issue", "--version"}}) {
      CliRun r = CliRun.of(args);
      assertEquals(0, r.exit(), r.err());
      assertEquals(
          "srdma " + p.getProperty("version") + " (commit " + commit + ")", r.out().strip());
      assertTrue(!r.out().contains("dev") && !r.out().contains("${"), r.out());
    }
  }

  @Test
  void shouldNameTheCommitOfThisCheckoutWhenGitIsThere() throws Exception {
    String commit = built().getProperty("commit");
    ProcessBuilder pb = new ProcessBuilder("git", "rev-parse", "--short=12", "HEAD");
    Process git;
    try {
      git = pb.redirectErrorStream(true).start();
    } catch (IOException e) {
      org.junit.jupiter.api.Assumptions.abort("no git here: " + e.getMessage());
      return;
    }
    String head = new String(git.getInputStream().readAllBytes()).strip();
    assertTrue(git.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "git did not finish");
    org.junit.jupiter.api.Assumptions.assumeTrue(git.exitValue() == 0, "not a git checkout");
    // the build may predate the newest commit of a long-lived checkout; the prefix is the check
    assertTrue(commit.matches("[0-9a-f]{12}"), "build recorded commit '" + commit + "'");
    ProcessBuilder known = new ProcessBuilder("git", "cat-file", "-e", commit + "^{commit}");
    Process check = known.redirectErrorStream(true).start();
    check.getInputStream().readAllBytes();
    assertTrue(check.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(
        0, check.exitValue(), commit + " is no commit of this checkout (HEAD " + head + ")");
  }

  @Test
  void shouldSayUnknownForWhatTheBuildDidNotFill() {
    Properties p = new Properties();
    assertEquals("srdma unknown (commit unknown)", SrdmaCommand.Version.describe(p));
    p.setProperty("version", "0.1.0-SNAPSHOT");
    p.setProperty("commit", "${srdma.git.commit}");
    assertEquals("srdma 0.1.0-SNAPSHOT (commit unknown)", SrdmaCommand.Version.describe(p));
    p.setProperty("commit", "abc1234");
    assertEquals("srdma 0.1.0-SNAPSHOT (commit abc1234)", SrdmaCommand.Version.describe(p));
    p.setProperty("commit", "abc\u001b[31m");
    assertEquals("srdma 0.1.0-SNAPSHOT (commit unknown)", SrdmaCommand.Version.describe(p));
  }
}
