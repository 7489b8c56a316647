package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerbsExampleCommandTest {
  private static int run(StringWriter out, StringWriter err, String... args) {
    CommandLine cli = SrdmaCommand.newCommandLine();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    return cli.execute(args);
  }

  @Test
  void shouldMoveDataAndShowEveryAttackRefused() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    assertEquals(0, run(out, err, "verbs-example"), () -> out + "\n" + err);
    String text = out.toString();
    assertTrue(
        text.contains("owner's memory now holds: \"hello from the client over RDMA WRITE\""), text);
    assertTrue(text.contains("write 1 byte past the window -> refused by the responder"), text);
    assertTrue(text.contains("guessed rkey -> refused"), text);
    assertTrue(text.contains("revoked window -> refused"), text);
    assertTrue(!text.contains("FAIL"), text);
  }

  @Test
  void shouldNameTheProblemForAnUnknownProvider() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    assertEquals(2, run(out, err, "verbs-example", "--provider", "nosuch"));
    assertTrue(err.toString().contains("no provider named 'nosuch'"), err.toString());
  }

  @Test
  void shouldRejectABadSize() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    assertEquals(2, run(out, err, "verbs-example", "--size", "3"));
    assertTrue(err.toString().contains("--size"), err.toString());
  }

  @Test
  void shouldReadSizesInTheProjectGrammar() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    assertEquals(0, run(out, err, "verbs-example", "--size", "8KiB"), () -> out + "\n" + err);
    assertTrue(out.toString().contains("owner exposes 8192 bytes"), out.toString());
    StringWriter out2 = new StringWriter();
    StringWriter err2 = new StringWriter();
    assertEquals(0, run(out2, err2, "verbs-example", "--size", "10kB"), () -> out2 + "\n" + err2);
    assertTrue(out2.toString().contains("owner exposes 10000 bytes"), out2.toString());
  }

  @Test
  void shouldRefuseSizesOutOfRangeOrAmbiguousWithTheReason() {
    String[][] cases = {
      {"10GB", "--size must be 16 B to 64 MiB, got 10 GB"},
      {"20EiB", "'20EiB' is too large"},
      {"4k", "write 4kB (powers of 1000) or 4KiB (powers of 1024)"},
      {"4 KB", "write 4kB (powers of 1000) or 4KiB (powers of 1024)"},
      {"ten", "'ten' is not a size"}
    };
    for (String[] c : cases) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      assertEquals(2, run(out, err, "verbs-example", "--size", c[0]), c[0]);
      String e = err.toString();
      assertTrue(e.contains(c[1]), c[0] + ": " + e);
      assertTrue(!e.contains("not an int") && !e.contains("Exception"), e);
      assertTrue(out.toString().isEmpty(), out.toString());
    }
  }
}
