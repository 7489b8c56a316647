package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Log, segment and key files that an attacker who can write the log directory swaps for something
 * that is not a file: a link to {@code /dev/zero}, a FIFO. The verifier and the writer must answer
 * with a typed failure naming the file, never read for ever or block for ever. Each call runs under
 * a preemptive timeout, so a hang fails the test instead of stopping the build.
 */
class AuditHostileFilesTest {
  private static final Duration LIMIT = Duration.ofSeconds(10);

  @TempDir Path dir;
  private AuditFixture fx;
  private Path log;

  @BeforeEach
  void writeALog() {
    fx = new AuditFixture(dir);
    log = dir.resolve("audit.log");
    fx.write(log, 4, 10);
  }

  static void mkfifo(Path p) throws Exception {
    Process mk = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
    assertTrue(mk.waitFor(10, TimeUnit.SECONDS), "mkfifo did not finish");
    assertEquals(0, mk.exitValue(), "mkfifo " + p);
  }

  @Test
  void shouldRefuseALogLinkedToAnEndlessDeviceEvenWhenLookingForAMissingLine() throws Exception {
    // a line deleted from the real file makes the verifier look for it in every file given,
    // the endless one included
    List<String> lines = AuditFixture.read(log);
    lines.remove(6);
    AuditFixture.write(log, lines);
    Path zero = dir.resolve("audit.log.000000000099");
    Files.createSymbolicLink(zero, Path.of("/dev/zero"));
    AuditException e =
        assertThrows(
            AuditException.class,
            () ->
                assertTimeoutPreemptively(
                    LIMIT, () -> fx.verifier().verify(List.of(log, zero), null, false)));
    assertTrue(e.getMessage().contains(zero.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
  }

  @Test
  void shouldRefuseAFifoGivenAsALogFile() throws Exception {
    Path fifo = dir.resolve("audit.log.000000000099");
    mkfifo(fifo);
    AuditException e =
        assertThrows(
            AuditException.class,
            () ->
                assertTimeoutPreemptively(
                    LIMIT, () -> fx.verifier().verify(List.of(log, fifo), null, false)));
    assertTrue(e.getMessage().contains(fifo.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
  }

  @Test
  void shouldRefuseToWriteIntoAFifoInPlaceOfTheActiveFile() throws Exception {
    Path w = Files.createDirectory(dir.resolve("w")).resolve("audit.log");
    mkfifo(w);
    AuditException e =
        assertThrows(
            AuditException.class,
            () ->
                assertTimeoutPreemptively(
                    LIMIT, () -> AuditLog.open(new AuditLogOptions(w).key(fx.key)).close()));
    assertTrue(e.getMessage().contains(w.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
  }

  @Test
  void shouldRefuseToContinueFromAFifoInPlaceOfTheNewestRotatedFile() throws Exception {
    Path w = Files.createDirectory(dir.resolve("w")).resolve("audit.log");
    Path segment = AuditLog.segmentName(w, 999_999_999_999L);
    mkfifo(segment);
    AuditException e =
        assertThrows(
            AuditException.class,
            () ->
                assertTimeoutPreemptively(
                    LIMIT, () -> AuditLog.open(new AuditLogOptions(w).key(fx.key)).close()));
    assertTrue(e.getMessage().contains(segment.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
  }

  @Test
  void shouldRefuseALockFileThatIsAHardLinkToAnotherFile() throws Exception {
    // the writer truncates its lock file to write its pid there: through a hard link, that would
    // empty the linked file (the audit key, a rotated log) of the same owner
    Path w = Files.createDirectory(dir.resolve("w")).resolve("audit.log");
    Path precious = dir.resolve("w").resolve("precious.txt");
    Files.writeString(precious, "keep me\n");
    Path lock = AuditLog.lockFile(w);
    Files.createLink(lock, precious);
    AuditException e =
        assertThrows(
            AuditException.class,
            () ->
                assertTimeoutPreemptively(
                    LIMIT, () -> AuditLog.open(new AuditLogOptions(w).key(fx.key)).close()));
    assertTrue(e.getMessage().contains(lock.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("hard links"), e.getMessage());
    assertEquals("keep me\n", Files.readString(precious));
    assertTrue(Files.notExists(w), "nothing written after the refused lock");
  }

  @Test
  void shouldReadAKeyFileNoFurtherThanAKeyLineReaches() throws Exception {
    Path key = dir.resolve("huge.key");
    Files.writeString(key, "srdma-audit-key-v1:");
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    try (RandomAccessFile f = new RandomAccessFile(key.toFile(), "rw")) {
      f.setLength(3L << 30); // sparse: 3 GiB that take no disk
    }
    AuditException e =
        assertThrows(
            AuditException.class, () -> assertTimeoutPreemptively(LIMIT, () -> AuditKey.load(key)));
    assertTrue(e.getMessage().contains(key.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not one line"), e.getMessage());
  }

  @Test
  void shouldRefuseAFifoInPlaceOfTheKeyFile() throws Exception {
    Path w = Files.createDirectory(dir.resolve("w")).resolve("audit.log");
    Path key = AuditKey.defaultFile(w);
    mkfifo(key);
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    AuditException e =
        assertThrows(
            AuditException.class, () -> assertTimeoutPreemptively(LIMIT, () -> AuditLog.open(w)));
    assertTrue(e.getMessage().contains(key.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
  }
}
