package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** Quiet by default, loud on request: where srdma's log lines go. */
class CliLoggingTest {
  @TempDir Path dir;

  private final PrintStream realErr = System.err;

  @AfterEach
  void restore() {
    System.setErr(realErr);
    CliLogging.terminal(false);
  }

  /** Runs {@code args} with System.err captured (where logback's console appender writes). */
  private String stderrOf(String... args) {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      CliRun r = CliRun.of(args);
      assertEquals(0, r.exit(), r.err());
      assertTrue(r.out().contains("created deployment CA"), r.out());
    } finally {
      System.setErr(realErr);
    }
    return captured.toString(StandardCharsets.UTF_8);
  }

  @Test
  void commandsPrintResultsNotLogLinesByDefault() {
    // ca init used to repeat its own result as an INFO line
    org.junit.jupiter.api.Assumptions.assumeTrue(
        System.getenv(CliLogging.LEVEL_ENV) == null, "SRDMA_LOG_LEVEL is set for this run");
    String quiet = stderrOf("ca", "init", "--dir", dir.resolve("a").toString());
    assertFalse(quiet.contains("INFO"), quiet);
    String verbose = stderrOf("ca", "init", "--dir", dir.resolve("b").toString(), "--verbose");
    assertTrue(verbose.contains("INFO") && verbose.contains("created deployment CA"), verbose);
    String rootVerbose = stderrOf("--verbose", "ca", "init", "--dir", dir.resolve("c").toString());
    assertTrue(rootVerbose.contains("INFO"), rootVerbose);
  }

  @Test
  void theEnvironmentVariableSetsTheTerminalLevel() {
    assertEquals(Level.OFF, CliLogging.terminalLevel(null, false));
    assertEquals(Level.INFO, CliLogging.terminalLevel(null, true));
    assertEquals(Level.DEBUG, CliLogging.terminalLevel("debug", false));
    assertEquals(Level.WARN, CliLogging.terminalLevel("WARN", true));
    assertEquals(Level.OFF, CliLogging.terminalLevel(" ", false));
    // a value that names no level leaves the default
    assertEquals(Level.INFO, CliLogging.terminalLevel("loud", true));
  }

  @Test
  void aStateDirectoryGetsTheLogFileUntilClosed() throws Exception {
    org.slf4j.Logger log = LoggerFactory.getLogger("io.srdma.test");
    Path file;
    try (CliLogging.LogFile f = CliLogging.toFile(dir)) {
      file = f.file();
      log.warn("written to the file");
    }
    log.warn("after the file was closed");
    assertEquals(dir.resolve(CliLogging.FILE_NAME).toAbsolutePath(), file);
    String text = Files.readString(file);
    assertTrue(text.contains("WARN") && text.contains("written to the file"), text);
    assertFalse(text.contains("after the file was closed"), text);
    assertEquals(
        "rw-------",
        java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
  }
}
