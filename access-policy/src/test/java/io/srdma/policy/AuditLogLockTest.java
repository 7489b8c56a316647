package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** One writer per audit log: a second opener is refused and leaves no trace in the log. */
@Timeout(120)
class AuditLogLockTest {
  @Test
  void shouldRefuseASecondWriterInThisProcessAndLetTheFirstGoOn(@TempDir Path dir)
      throws Exception {
    AuditFixture fx = new AuditFixture(dir);
    Path f = dir.resolve("audit.log");
    try (AuditLog first = AuditLog.open(fx.options(f, 100))) {
      first.append(AuditLogTest.event(1));
      byte[] log = Files.readAllBytes(f);

      for (int i = 0; i < 2; i++) { // twice: a refused open releases nothing of the first's
        AuditLogLockedException e =
            assertThrows(AuditLogLockedException.class, () -> AuditLog.open(fx.options(f, 100)));
        assertEquals(dir.resolve("audit.lock").toAbsolutePath(), e.lockFile());
        assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("audit.lock"), e.getMessage());
        assertTrue(e.getMessage().contains("already open for writing"), e.getMessage());
        assertTrue(e.getMessage().contains("in this process"), e.getMessage());
        // an AuditException, as callers catching those expect
        assertThrows(AuditException.class, () -> AuditLog.open(f));
      }
      assertArrayEquals(log, Files.readAllBytes(f), "the second opener wrote nothing");
      assertFalse(Files.exists(dir.resolve("audit.key")), "nor created a key file");

      first.append(AuditLogTest.event(2));
      first.append(AuditLogTest.event(3));
    }
    assertEquals(
        "rw-------",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("audit.lock"))));
    // closed: the lock is free again, and the chain is one chain
    String head;
    try (AuditLog again = AuditLog.open(fx.options(f, 100))) {
      head = again.append(AuditLogTest.event(4));
    }
    AuditVerification v = fx.verifier().verify(List.of(f), null, true);
    assertTrue(v.intact(), v.summary());
    assertTrue(fx.verifier().verify(List.of(f), AuditVerifier.Head.parse(head), false).intact());
  }

  @Test
  void shouldReleaseTheLockWhenOpeningFails(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    AuditLog.open(f).close();
    Files.writeString(f, "not an audit line\n", StandardCharsets.US_ASCII);
    assertThrows(AuditException.class, () -> AuditLog.open(f));
    Files.delete(f);
    // the refused file did not keep the lock
    try (AuditLog log = AuditLog.open(f)) {
      log.append(AuditLogTest.event(1));
    }
  }

  @Test
  void shouldRefuseAWriterWhileAnotherProcessHoldsTheLog(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    Process other =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                OtherWriter.class.getName(),
                f.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(other.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("open", out.readLine());
      byte[] log = Files.readAllBytes(f);
      byte[] key = Files.readAllBytes(dir.resolve("audit.key"));

      AuditLogLockedException e =
          assertThrows(AuditLogLockedException.class, () -> AuditLog.open(f));
      assertTrue(
          e.getMessage().contains("another process (pid " + other.pid() + ")"), e.getMessage());
      assertTrue(e.getMessage().contains(dir.resolve("audit.lock").toString()), e.getMessage());
      assertArrayEquals(log, Files.readAllBytes(f), "the second opener wrote nothing");
      assertArrayEquals(key, Files.readAllBytes(dir.resolve("audit.key")));

      other.getOutputStream().close(); // the other writer appends once more and closes
      assertTrue(other.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, other.exitValue());
    } finally {
      other.destroyForcibly();
    }
    String head;
    try (AuditLog log = AuditLog.open(f)) {
      assertEquals(3, log.sequence());
      head = log.append(AuditLogTest.event(3));
    }
    try (AuditKey k = AuditKey.load(AuditKey.defaultFile(f))) {
      AuditVerification v =
          new AuditVerifier(k, null).verify(List.of(f), AuditVerifier.Head.parse(head), false);
      assertTrue(v.intact(), v.summary());
    }
  }

  @Test
  void shouldOpenALogWhoseWriterWasKilledHoldingItsLock(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    Path lock = dir.resolve("audit.lock");
    Process other =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                OtherWriter.class.getName(),
                f.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(other.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("open", out.readLine());
      assertThrows(AuditLogLockedException.class, () -> AuditLog.open(f));
    } finally {
      other.destroyForcibly(); // SIGKILL: no close, no release; the lock file stays behind
    }
    assertTrue(other.waitFor(60, TimeUnit.SECONDS));
    assertEquals(other.pid() + "\n", Files.readString(lock), "the dead writer's lock file");

    // the OS dropped the dead process's lock: the host starts, without anyone removing the file
    String head;
    try (AuditLog log = AuditLog.open(f)) {
      assertEquals(2, log.sequence(), "continues the dead writer's chain");
      assertEquals(ProcessHandle.current().pid() + "\n", Files.readString(lock));
      head = log.append(AuditLogTest.event(2));
    }
    try (AuditKey k = AuditKey.load(AuditKey.defaultFile(f))) {
      AuditVerification v =
          new AuditVerifier(k, null).verify(List.of(f), AuditVerifier.Head.parse(head), false);
      assertTrue(v.intact(), v.summary());
    }
  }

  /** The live writer in another process: opens the log, says so, waits for stdin to close. */
  public static final class OtherWriter {
    private OtherWriter() {}

    public static void main(String[] args) throws Exception {
      try (AuditLog log = AuditLog.open(Path.of(args[0]))) {
        log.append(AuditLogTest.event(1));
        System.out.println("open");
        System.out.flush();
        System.in.readAllBytes();
        log.append(AuditLogTest.event(2));
      }
    }
  }
}
