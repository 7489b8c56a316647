package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

class AuditLogTest {
  static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T19:00:00Z"), ZoneOffset.UTC);

  static AuditEvent event(int i) {
    return AuditEvent.builder(
            i % 2 == 0 ? AuditAction.GRANT : AuditAction.DECIDE, AuditOutcome.ALLOWED)
        .actor("srdma://acme/trainer-" + i)
        .tenant("acme")
        .reason("ALLOWED")
        .region("kvcache")
        .grant("g-" + i)
        .range(0, 4096)
        .operations(EnumSet.of(Operation.WRITE))
        .ttl(Duration.ofSeconds(30))
        .build();
  }

  @Test
  void shouldWriteOneChainedJsonLinePerEvent(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    String head;
    try (AuditLog log = AuditLog.open(f, AuditLog.DEFAULT_ROTATE_BYTES, CLOCK)) {
      log.append(event(1));
      head = log.append(event(2));
      assertEquals(2, log.sequence());
      assertEquals(head, log.head());
    }
    List<String> lines = Files.readAllLines(f);
    assertEquals(2, lines.size());
    assertEquals(
        "{\"seq\":1,\"prev\":\""
            + "0".repeat(64)
            + "\",\"time\":\"2026-11-29T19:00:00Z\","
            + "\"action\":\"decide\",\"outcome\":\"allowed\",\"actor\":\"srdma://acme/trainer-1\","
            + "\"tenant\":\"acme\",\"reason\":\"ALLOWED\",\"region\":\"kvcache\",\"grant\":\"g-1\","
            + "\"offset\":0,\"length\":4096,\"ops\":\"write\",\"ttl_ms\":30000}",
        lines.get(0));
    assertTrue(lines.get(1).contains("\"prev\":\"" + sha(lines.get(0)) + "\""));
    assertEquals(sha(lines.get(1)), head);
    Map<String, Object> parsed = parse(lines.get(1));
    assertEquals("grant", parsed.get("action"));
    assertEquals("srdma://acme/trainer-2", parsed.get("actor"));
    assertTrue(AuditVerifier.verify(List.of(f), head).intact());
  }

  @Test
  void shouldContinueTheChainAfterReopening(@TempDir Path dir) {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f)) {
      log.append(event(1));
    }
    String head;
    try (AuditLog log = AuditLog.open(f)) {
      assertEquals(1, log.sequence());
      head = log.append(event(2));
    }
    AuditVerification v = AuditVerifier.verify(List.of(f), head);
    assertTrue(v.intact(), v.summary());
    assertEquals(2, v.lines());
  }

  @Test
  void shouldRotateBySizeKeepingTheChainAcrossFiles(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    String head = null;
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      for (int i = 1; i <= 40; i++) {
        head = log.append(event(i));
      }
    }
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.forEach(files::add);
    }
    assertTrue(files.size() > 5, files.toString());
    for (Path p : files) {
      assertTrue(Files.size(p) <= 1024, p + " " + Files.size(p));
    }
    assertTrue(Files.exists(AuditLog.segmentName(f, 1)));
    Collections.shuffle(files, new java.util.Random(7));
    AuditVerification v = AuditVerifier.verify(files, head);
    assertTrue(v.intact(), v.summary());
    assertEquals(40, v.lines());
    assertEquals(1, v.firstSeq());

    // reopening after rotation continues from the newest file
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      assertEquals(40, log.sequence());
      assertEquals(head, log.head());
    }
  }

  @Test
  void shouldContinueFromTheNewestSegmentWhenTheActiveFileIsGone(@TempDir Path dir)
      throws Exception {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      for (int i = 1; i <= 12; i++) {
        log.append(event(i));
      }
    }
    long active;
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      active = log.sequence();
    }
    Files.move(f, AuditLog.segmentName(f, 99));
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      assertEquals(active, log.sequence());
    }
  }

  @Test
  void shouldRefuseToContinueAfterAPartialLine(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f)) {
      log.append(event(1));
    }
    Files.writeString(f, "{\"seq\":2,\"prev\":\"ab", java.nio.file.StandardOpenOption.APPEND);
    AuditException e = assertThrows(AuditException.class, () -> AuditLog.open(f));
    assertEquals(PolicyException.Category.AUDIT, e.category());
  }

  @Test
  void shouldRefuseAppendsAfterClose(@TempDir Path dir) {
    AuditLog log = AuditLog.open(dir.resolve("a.log"));
    log.close();
    log.close();
    PolicyException e = assertThrows(PolicyException.class, () -> log.append(event(1)));
    assertEquals(PolicyException.Category.CLOSED, e.category());
  }

  @Test
  void shouldMarkOnlyGrantsAndRevokesDurable() {
    for (AuditAction a : AuditAction.values()) {
      assertEquals(a == AuditAction.GRANT || a == AuditAction.REVOKE, a.durable(), a.name());
    }
  }

  @Test
  void shouldOfferNoWayToLogKeyBytesOrPasswords() {
    List<Method> api = new ArrayList<>(List.of(AuditEvent.Builder.class.getDeclaredMethods()));
    api.addAll(List.of(AuditEvent.class.getDeclaredMethods()));
    api.removeIf(m -> !java.lang.reflect.Modifier.isPublic(m.getModifiers()));
    assertTrue(api.size() > 10);
    for (Method m : api) {
      for (Class<?> p : m.getParameterTypes()) {
        assertFalse(
            p == byte[].class
                || p == char[].class
                || p == java.nio.ByteBuffer.class
                || p == Object.class
                || java.security.Key.class.isAssignableFrom(p),
            m.toString());
      }
    }
  }

  @Test
  void shouldLogADecisionWithItsRoleAndPermission(@TempDir Path dir) throws Exception {
    GrantAuthority a = new GrantAuthority(new PolicyLoader().loadSample());
    Decision d =
        a.decide(
            "srdma://acme/trainer-1",
            "acme",
            "kvcache",
            EnumSet.of(Operation.WRITE),
            0,
            64,
            Duration.ofHours(1));
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f)) {
      log.append(AuditEvent.of(AuditAction.GRANT, d).grant("g-1").build());
    }
    Map<String, Object> line = parse(Files.readAllLines(f).get(0));
    assertEquals("allowed", line.get("outcome"));
    assertEquals("ALLOWED", line.get("reason"));
    assertEquals(600_000, line.get("ttl_ms"));
    assertTrue(String.valueOf(line.get("detail")).contains("region:read,write:kvcache"));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> parse(String jsonLine) {
    // YAML 1.2 reads JSON; snakeyaml-engine decodes every escape, surrogates included
    return (Map<String, Object>) new Load(LoadSettings.builder().build()).loadFromString(jsonLine);
  }

  static String sha(String line) throws Exception {
    return HexFormat.of()
        .formatHex(
            java.security.MessageDigest.getInstance("SHA-256")
                .digest(line.getBytes(StandardCharsets.US_ASCII)));
  }
}
