package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class DemoCommandTest {
  @TempDir Path dir;

  @Test
  void demoOnceRunsEverythingAndEveryAttackIsRefused() {
    StringWriter out = new StringWriter();
    CommandLine cmd = new CommandLine(new SrdmaCommand());
    cmd.setOut(new PrintWriter(out, true));
    int rc = cmd.execute("demo", "--once", "--state-dir", dir.toString());
    String text = out.toString();
    assertEquals(0, rc, text);
    assertTrue(text.contains("demo: every outcome as expected"), text);
    assertTrue(text.contains("another tenant's rkey and address (PD check)"), text);
    assertTrue(text.contains("QUOTA_EXCEEDED after"), text);
    assertTrue(!text.contains("FAIL "), text);
  }
}
