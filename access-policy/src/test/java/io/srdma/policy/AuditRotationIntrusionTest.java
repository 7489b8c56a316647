package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Someone who can write the log directory puts a file, or a link to another file, where a rotation
 * goes: at the next rotated file's name before it, or at the active file's name between the rename
 * and the new file; or an empty file open to others where a log starts. The log writes into none of
 * them, follows no link, and fails with an {@link AuditException} naming the file; the lines
 * already written still verify.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AuditRotationIntrusionTest {
  private static final byte[] FORGED =
      "{\"seq\":1,\"forged\":true}\n".getBytes(StandardCharsets.US_ASCII);

  @TempDir Path dir;
  private AuditFixture fx;
  private Path log;
  private Path victim;

  @BeforeEach
  void setUp() throws IOException {
    fx = new AuditFixture(dir);
    log = Files.createDirectory(dir.resolve("logs")).resolve("audit.log");
    victim = dir.resolve("victim.txt");
    Files.write(victim, "not the log's\n".getBytes(StandardCharsets.US_ASCII));
  }

  private AuditLogOptions options() {
    return fx.options(log, 1000).rotateBytes(2048);
  }

  /** Appends until one fails and returns its failure; fails if the log rotated without one. */
  private static AuditException appendUntilRefused(AuditLog audit, Path log) throws IOException {
    for (int i = 1; i < 1000; i++) {
      long before = Files.size(log);
      try {
        audit.append(AuditLogTest.event(i));
      } catch (AuditException e) {
        return e;
      }
      assertTrue(Files.size(log) > before, "the log rotated without noticing the planted file");
    }
    throw new AssertionError("never rotated");
  }

  @Test
  void shouldNotContinueTheChainInAFilePlacedWhereTheNewFileGoes() throws Exception {
    try (AuditLog audit = AuditLog.open(options())) {
      audit.afterSegmentMoved(() -> write(log, FORGED));
      AuditException e = appendUntilRefused(audit, log);
      assertTrue(e.getMessage().contains(log.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("appeared"), e.getMessage());
      assertArrayEquals(FORGED, Files.readAllBytes(log), "the planted file was written to");
      // failed closed: nothing more is written anywhere
      AuditException again =
          assertThrows(AuditException.class, () -> audit.append(AuditLogTest.event(0)));
      assertTrue(again.getMessage().contains("failed earlier"), again.getMessage());
    }
    assertArrayEquals(FORGED, Files.readAllBytes(log));
    Path segment = AuditLog.segmentName(log, 1);
    List<String> lines = AuditFixture.read(segment);
    assertTrue(lines.get(lines.size() - 1).contains("\"reason\":\"rotate\""), lines.toString());
    AuditVerification v = fx.verifier().verify(List.of(segment), null, false);
    assertTrue(v.intact(), v.summary());
  }

  @Test
  void shouldNotFollowALinkPlacedWhereTheNewFileGoes() throws Exception {
    byte[] victimBytes = Files.readAllBytes(victim);
    try (AuditLog audit = AuditLog.open(options())) {
      audit.afterSegmentMoved(() -> link(log, victim));
      AuditException e = appendUntilRefused(audit, log);
      assertTrue(e.getMessage().contains(log.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("appeared"), e.getMessage());
    }
    assertArrayEquals(victimBytes, Files.readAllBytes(victim), "the link was followed");
    assertTrue(Files.isSymbolicLink(log));
  }

  @Test
  void shouldRefuseToRotateOntoAFileAlreadyAtTheRotatedName() throws Exception {
    Path segment = AuditLog.segmentName(log, 1);
    AuditException e;
    byte[] active;
    try (AuditLog audit = AuditLog.open(options())) {
      Files.write(segment, FORGED); // while the log is open, before its first rotation
      e = appendUntilRefused(audit, log);
      active = Files.readAllBytes(log);
    }
    assertTrue(e.getMessage().contains(segment.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("already exists"), e.getMessage());
    assertArrayEquals(FORGED, Files.readAllBytes(segment), "the planted file was replaced");
    // nothing half-applied: no rotate checkpoint, the active file is where it was and verifies
    assertArrayEquals(active, Files.readAllBytes(log));
    assertTrue(!new String(active, StandardCharsets.US_ASCII).contains("\"reason\":\"rotate\""));
    AuditVerification v = fx.verifier().verify(List.of(log), null, false);
    assertTrue(v.intact(), v.summary());
  }

  @Test
  void shouldRefuseToRotateOntoALinkAtTheRotatedName() throws Exception {
    Path segment = AuditLog.segmentName(log, 1);
    byte[] victimBytes = Files.readAllBytes(victim);
    try (AuditLog audit = AuditLog.open(options())) {
      Files.createSymbolicLink(segment, victim);
      AuditException e = appendUntilRefused(audit, log);
      assertTrue(e.getMessage().contains(segment.toString()), e.getMessage());
    }
    assertTrue(Files.isSymbolicLink(segment), "the planted link was replaced");
    assertEquals(victim, Files.readSymbolicLink(segment));
    assertArrayEquals(victimBytes, Files.readAllBytes(victim));
  }

  @Test
  void shouldNotWriteIntoAnEmptyLogFileThatOthersMayRead() throws Exception {
    // planted before the first start: the log would take it for its own, crashed before genesis
    Files.createFile(log);
    Files.setPosixFilePermissions(log, PosixFilePermissions.fromString("rw-rw-rw-"));
    AuditException e = assertThrows(AuditException.class, () -> AuditLog.open(options()));
    assertTrue(e.getMessage().contains(log.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("rw-rw-rw-"), e.getMessage());
    assertEquals(0, Files.size(log), "written to");
    // one of its own, empty after a crash before its genesis, is continued
    Files.setPosixFilePermissions(log, PosixFilePermissions.fromString("rw-------"));
    try (AuditLog audit = AuditLog.open(options())) {
      audit.append(AuditLogTest.event(1));
    }
    assertTrue(fx.verifier().verify(List.of(log), null, true).intact());
  }

  private static void write(Path p, byte[] bytes) {
    try {
      Files.write(p, bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void link(Path p, Path target) {
    try {
      Files.createSymbolicLink(p, target);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
