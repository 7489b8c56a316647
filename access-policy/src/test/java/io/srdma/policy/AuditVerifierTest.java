package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditVerifierTest {
  @TempDir Path dir;
  private Path log;
  private String head;
  private List<String> lines;

  @BeforeEach
  void writeTenLines() throws Exception {
    log = dir.resolve("audit.log");
    try (AuditLog a = AuditLog.open(log, AuditLog.DEFAULT_ROTATE_BYTES, AuditLogTest.CLOCK)) {
      for (int i = 1; i <= 10; i++) {
        head = a.append(AuditLogTest.event(i));
      }
    }
    lines = new ArrayList<>(Files.readAllLines(log));
    assertTrue(AuditVerifier.verify(List.of(log), head).intact());
  }

  private AuditVerification rewrite() throws Exception {
    Files.write(log, lines);
    return AuditVerifier.verify(List.of(log), null);
  }

  @Test
  void shouldReportAnEditedLine() throws Exception {
    lines.set(4, lines.get(4).replace("trainer-5", "trainer-6"));
    AuditVerification v = rewrite();
    assertFalse(v.intact());
    assertEquals(5, v.brokenLine());
    assertEquals(log, v.brokenFile());
    assertTrue(v.problem().startsWith("edited"), v.problem());
    assertTrue(v.summary().startsWith(log + ":5: edited"), v.summary());
  }

  @Test
  void shouldReportADeletedLine() throws Exception {
    lines.remove(3);
    AuditVerification v = rewrite();
    assertFalse(v.intact());
    assertEquals(4, v.brokenLine());
    assertTrue(v.problem().contains("1 line(s) deleted"), v.problem());
  }

  @Test
  void shouldReportReorderedLines() throws Exception {
    String six = lines.remove(5);
    lines.add(2, six);
    AuditVerification v = rewrite();
    assertFalse(v.intact());
    assertEquals(3, v.brokenLine());
  }

  @Test
  void shouldReportATruncatedLine() throws Exception {
    String all = String.join("\n", lines) + "\n";
    Files.writeString(log, all.substring(0, all.length() - 20));
    AuditVerification v = AuditVerifier.verify(List.of(log), null);
    assertFalse(v.intact());
    assertEquals(10, v.brokenLine());
    assertTrue(v.problem().startsWith("truncated"), v.problem());
  }

  @Test
  void shouldReportLinesCutFromTheEndAgainstTheRecordedHead() throws Exception {
    lines.remove(9);
    Files.write(log, lines);
    assertTrue(AuditVerifier.verify(List.of(log), null).intact());
    AuditVerification v = AuditVerifier.verify(List.of(log), head);
    assertFalse(v.intact());
    assertTrue(v.problem().contains("not the expected"), v.problem());
  }

  @Test
  void shouldReportAForgedFirstLine() throws Exception {
    lines.set(0, lines.get(0).replace("\"prev\":\"0000", "\"prev\":\"1111"));
    AuditVerification v = rewrite();
    assertFalse(v.intact());
    assertEquals(1, v.brokenLine());
  }

  @Test
  void shouldReportADeletedRotatedFile() throws Exception {
    Path f = dir.resolve("rot.log");
    try (AuditLog a = AuditLog.open(f, 1024, AuditLogTest.CLOCK)) {
      for (int i = 1; i <= 30; i++) {
        a.append(AuditLogTest.event(i));
      }
    }
    List<Path> files = new ArrayList<>();
    try (var s = Files.list(dir)) {
      s.filter(p -> p.getFileName().toString().startsWith("rot.log")).sorted().forEach(files::add);
    }
    Path removed = files.remove(2);
    AuditVerification v = AuditVerifier.verify(files, null);
    assertFalse(v.intact(), "removed " + removed);
    assertTrue(v.problem().contains("deleted"), v.problem());
  }
}
