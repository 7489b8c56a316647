package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
  void shouldWriteOneKeyedJsonLinePerEventAfterAGenesisLine(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    String head;
    String keyId;
    try (AuditLog log = AuditLog.open(f, AuditLog.DEFAULT_ROTATE_BYTES, CLOCK)) {
      log.append(event(1));
      head = log.append(event(2));
      assertEquals(3, log.sequence());
      assertEquals(head, log.head());
      keyId = log.keyId();
    }
    byte[] key = readKey(dir.resolve("audit.key"));
    List<String> lines = Files.readAllLines(f);
    assertEquals(3, lines.size());
    String genesis =
        "{\"seq\":1,\"prev\":\""
            + "0".repeat(64)
            + "\",\"time\":\"2026-11-29T19:00:00Z\",\"action\":\"genesis\",\"outcome\":\"success\","
            + "\"actor\":\"system\",\"tenant\":null,\"reason\":\"new\",\"key_id\":\""
            + keyId
            + "\"";
    assertEquals(genesis + ",\"mac\":\"" + AuditFixture.hmac(key, genesis) + "\"}", lines.get(0));
    String first =
        "{\"seq\":2,\"prev\":\""
            + AuditFixture.macOf(lines.get(0))
            + "\",\"time\":\"2026-11-29T19:00:00Z\","
            + "\"action\":\"decide\",\"outcome\":\"allowed\",\"actor\":\"srdma://acme/trainer-1\","
            + "\"tenant\":\"acme\",\"reason\":\"ALLOWED\",\"region\":\"kvcache\",\"grant\":\"g-1\","
            + "\"offset\":0,\"length\":4096,\"ops\":\"write\",\"ttl_ms\":30000";
    assertEquals(first + ",\"mac\":\"" + AuditFixture.hmac(key, first) + "\"}", lines.get(1));
    assertTrue(lines.get(2).contains("\"prev\":\"" + AuditFixture.macOf(lines.get(1)) + "\""));
    assertEquals(AuditFixture.macOf(lines.get(2)), head);
    Map<String, Object> parsed = parse(lines.get(2));
    assertEquals("grant", parsed.get("action"));
    assertEquals("srdma://acme/trainer-2", parsed.get("actor"));
    try (AuditKey k = AuditKey.load(dir.resolve("audit.key"))) {
      assertEquals(keyId, k.id());
      AuditVerification v =
          new AuditVerifier(k, null).verify(List.of(f), AuditVerifier.Head.parse(head), false);
      assertTrue(v.intact(), v.summary());
    }
  }

  private static byte[] readKey(Path keyFile) throws Exception {
    String text = Files.readString(keyFile).trim();
    assertTrue(text.startsWith("srdma-audit-key-v1:"), "key file format");
    return HexFormat.of().parseHex(text.substring("srdma-audit-key-v1:".length()));
  }

  @Test
  void shouldCreateTheLogTheKeyAndRotatedFilesOwnerOnly(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      for (int i = 1; i <= 12; i++) {
        log.append(event(i));
      }
    }
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.toList();
    }
    assertTrue(files.size() > 3, files.toString());
    for (Path p : files) {
      assertEquals(
          "rw-------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(p)),
          p.toString());
    }
  }

  @Test
  void shouldRefuseAKeyFileOpenToOthersOrMalformed(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    AuditLog.open(f).close();
    Path key = dir.resolve("audit.key");
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r-----"));
    AuditException open = assertThrows(AuditException.class, () -> AuditLog.open(f));
    assertTrue(open.getMessage().contains("chmod 600"), open.getMessage());
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    Files.writeString(key, "srdma-audit-key-v1:abc\n");
    AuditException bad = assertThrows(AuditException.class, () -> AuditKey.load(key));
    assertTrue(bad.getMessage().contains("64 hex digits"), bad.getMessage());
  }

  @Test
  void shouldContinueTheChainAfterReopening(@TempDir Path dir) {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f)) {
      log.append(event(1));
    }
    String head;
    try (AuditLog log = AuditLog.open(f)) {
      assertEquals(2, log.sequence());
      head = log.append(event(2));
    }
    AuditVerification v;
    try (AuditKey k = AuditKey.load(dir.resolve("audit.key"))) {
      // a head is only evidence with the key (AuditVerifier.UnprovenHead without it)
      v = new AuditVerifier(k, null).verify(List.of(f), AuditVerifier.Head.parse(head), false);
    }
    assertTrue(v.intact(), v.summary());
    assertEquals(3, v.lines());
  }

  @Test
  void shouldRefuseToContinueAnEditedLogOrOneWithAnotherKey(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f)) {
      log.append(event(1));
      log.append(event(2));
    }
    List<String> lines = Files.readAllLines(f);
    Files.write(
        f, List.of(lines.get(0), lines.get(1).replace("trainer-1", "trainer-7"), lines.get(2)));
    AuditException e = assertThrows(AuditException.class, () -> AuditLog.open(f));
    assertTrue(e.getMessage().contains(":2: edited"), e.getMessage());
    Files.write(f, lines);
    try (AuditKey other = AuditKey.random()) {
      AuditException k =
          assertThrows(
              AuditException.class, () -> AuditLog.open(new AuditLogOptions(f).key(other)));
      assertTrue(k.getMessage().contains("wrong key"), k.getMessage());
    }
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
      s.filter(p -> !p.getFileName().toString().matches(".*\\.(key|lock)")).forEach(files::add);
    }
    assertTrue(files.size() > 5, files.toString());
    for (Path p : files) {
      assertTrue(Files.size(p) <= 1024, p + " " + Files.size(p));
      assertTrue(Files.readAllLines(p).get(0).contains("\"action\":\"genesis\""), p.toString());
    }
    assertTrue(Files.exists(AuditLog.segmentName(f, 1)));
    Collections.shuffle(files, new java.util.Random(7));
    AuditVerification v;
    try (AuditKey k = AuditKey.load(dir.resolve("audit.key"))) {
      v = new AuditVerifier(k, null).verify(files, AuditVerifier.Head.parse(head), false);
    }
    assertTrue(v.intact(), v.summary());
    assertEquals(40 + files.size(), v.lines());
    assertEquals(1, v.firstSeq());

    // reopening after rotation continues from the newest file
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      assertEquals(v.lastSeq(), log.sequence());
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
    String head;
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      active = log.sequence();
      head = log.head();
    }
    Files.move(f, AuditLog.segmentName(f, 99));
    try (AuditLog log = AuditLog.open(f, 1024, CLOCK)) {
      assertEquals(active + 1, log.sequence());
    }
    String genesis = Files.readAllLines(f).get(0);
    assertTrue(genesis.contains("\"reason\":\"continued\""), genesis);
    assertTrue(genesis.contains("\"prev\":\"" + head + "\""), genesis);
  }

  @Test
  void shouldMarkANewChainStartedWhileItsKeyExisted(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f)) {
      log.append(event(1));
    }
    Files.delete(f);
    try (AuditLog log = AuditLog.open(f)) {
      log.append(event(2));
    }
    assertTrue(Files.readAllLines(f).get(0).contains("\"reason\":\"restarted\""));
    AuditVerification v = AuditVerifier.verify(List.of(f), null);
    assertTrue(v.intact(), v.summary());
    assertTrue(
        v.notes().contains("restarted at seq 1 while its audit key already existed"), v.notes());
  }

  @Test
  void shouldRefuseToContinueAfterAPartialLine(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(f)) {
      log.append(event(1));
    }
    Files.writeString(f, "{\"seq\":3,\"prev\":\"ab", java.nio.file.StandardOpenOption.APPEND);
    AuditException e = assertThrows(AuditException.class, () -> AuditLog.open(f));
    assertEquals(PolicyException.Category.AUDIT, e.category());
    assertTrue(e.getMessage().contains("truncated"), e.getMessage());
  }

  @Test
  void shouldWriteCheckpointsByLinesAtRotationAndAtClose(@TempDir Path dir) throws Exception {
    AuditFixture fx = new AuditFixture(dir);
    Path f = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(fx.options(f, 3))) {
      for (int i = 1; i <= 6; i++) {
        log.append(event(i));
      }
      assertTrue(log.checkpoint());
      assertFalse(log.checkpoint(), "nothing waits for a checkpoint");
    }
    List<String> lines = Files.readAllLines(f);
    List<String> reasons = new ArrayList<>();
    for (String l : lines) {
      Map<String, Object> m = parse(l);
      if ("checkpoint".equals(m.get("action"))) {
        reasons.add(m.get("seq") + ":" + m.get("reason") + ":" + m.get("from"));
      }
    }
    // genesis(1) e1 e2 cp(4) e3 e4 e5 cp(8) e6 cp(10, asked for) close(11)
    assertEquals(List.of("4:interval:1", "8:interval:4", "10:interval:8", "11:close:10"), reasons);
    AuditVerification v = fx.verifier().verify(List.of(f), null, true);
    assertTrue(v.intact(), v.summary());
  }

  @Test
  void shouldCheckpointByTimeWhileLinesWait(@TempDir Path dir) throws Exception {
    AuditFixture fx = new AuditFixture(dir);
    Path f = dir.resolve("audit.log");
    try (AuditLog log =
        AuditLog.open(fx.options(f, 1000).checkpointInterval(Duration.ofMillis(20)))) {
      log.append(event(1));
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!Files.readString(f).contains("\"action\":\"checkpoint\"")) {
        assertTrue(System.nanoTime() < deadline, "no checkpoint by time within 10 s");
        Thread.sleep(10);
      }
    }
    assertTrue(fx.verifier().verify(List.of(f), null, true).intact());
  }

  @Test
  void shouldRefuseToAppendGenesisOrCheckpointEvents(@TempDir Path dir) {
    try (AuditLog log = AuditLog.open(dir.resolve("a.log"))) {
      for (AuditAction a : new AuditAction[] {AuditAction.GENESIS, AuditAction.CHECKPOINT}) {
        PolicyException e =
            assertThrows(
                PolicyException.class,
                () -> log.append(AuditEvent.builder(a, AuditOutcome.SUCCESS).build()));
        assertEquals(PolicyException.Category.ILLEGAL_ARGUMENT, e.category());
      }
    }
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
  void shouldMarkOnlyGrantsRevokesAndAnchorEventsDurable() {
    for (AuditAction a : AuditAction.values()) {
      assertEquals(
          a == AuditAction.GRANT || a == AuditAction.REVOKE || a == AuditAction.ANCHOR,
          a.durable(),
          a.name());
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
    Map<String, Object> line = parse(Files.readAllLines(f).get(1));
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
}
