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
}
