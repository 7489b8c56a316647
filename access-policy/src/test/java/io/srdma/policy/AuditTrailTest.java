package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditTrailTest {
  @Test
  void shouldWriteOneVerifiableLinePerSecurityEvent(@TempDir Path dir) throws Exception {
    Policy policy = new PolicyLoader().loadSample();
    GrantAuthority authority = new GrantAuthority(policy);
    ConsoleUsers users = new ConsoleUsers(authority::policy);
    Path file = dir.resolve("audit.log");
    String head;
    try (AuditLog log = AuditLog.open(file)) {
      AuditTrail trail = new AuditTrail(log);
      trail.peerAuthenticated("srdma://acme/trainer-1", "acme", true, "ok");
      trail.consoleLogin(users.authenticate("admin", "wrong-password".toCharArray()), "10.0.0.9");
      Decision denied =
          authority.decide(
              "srdma://acme/trainer-1",
              "globex",
              "kvcache",
              EnumSet.of(Operation.READ),
              0,
              1,
              Duration.ofSeconds(1));
      trail.decided(denied);
      assertThrows(PolicyException.class, () -> trail.granted(denied, "g-0"));
      Decision d =
          authority.issue(
              "g-1",
              "srdma://acme/trainer-1",
              "acme",
              "kvcache",
              EnumSet.of(Operation.WRITE),
              0,
              4096,
              Duration.ofMinutes(1));
      trail.granted(d, "g-1");
      trail.revoked(authority.release("g-1").orElseThrow(), "admin", "console");
      trail.reloaded(authority.reload(policy), AuditTrail.SYSTEM);
      trail.reloadRejected(
          new PolicyRejectedException(List.of(new PolicyError("p.yaml", 3, 4, "bad"))),
          AuditTrail.SYSTEM);
      head =
          trail.accessViolation(
              "srdma://acme/trainer-1", "acme", "kvcache", 1L << 40, 8, "rem_access_err");
    }
    List<String> lines = new java.util.ArrayList<>(Files.readAllLines(file));
    assertEquals("genesis", AuditLogTest.parse(lines.remove(0)).get("action"));
    assertEquals(8, lines.size());
    try (AuditKey k = AuditKey.load(file.resolveSibling("audit.key"))) {
      assertTrue(
          new AuditVerifier(k, null)
              .verify(List.of(file), AuditVerifier.Head.parse(head), false)
              .intact());
    }
    Map<String, Object> login = AuditLogTest.parse(lines.get(1));
    assertEquals("failure", login.get("outcome"));
    assertEquals("BAD_PASSWORD", login.get("reason"));
    assertFalse(lines.get(1).contains("wrong-password"));
    assertEquals("TENANT_MISMATCH", AuditLogTest.parse(lines.get(2)).get("reason"));
    Map<String, Object> grant = AuditLogTest.parse(lines.get(3));
    assertEquals("grant", grant.get("action"));
    assertEquals("g-1", grant.get("grant"));
    Map<String, Object> revoke = AuditLogTest.parse(lines.get(4));
    assertEquals("srdma://acme/trainer-1", revoke.get("peer"));
    assertEquals("admin", revoke.get("actor"));
    assertEquals("failure", AuditLogTest.parse(lines.get(6)).get("outcome"));
    assertEquals("access_violation", AuditLogTest.parse(lines.get(7)).get("action"));
  }

  @Test
  void shouldWriteTheConsoleLogoutInTheShapeOfTheLogin(@TempDir Path dir) throws Exception {
    ConsoleUsers users = new ConsoleUsers(new PolicyLoader()::loadSample);
    Path file = dir.resolve("audit.log");
    try (AuditLog log = AuditLog.open(file)) {
      AuditTrail trail = new AuditTrail(log);
      trail.consoleLogin(users.authenticate("admin", "admin-demo".toCharArray()), "10.0.0.9");
      trail.consoleLogout("admin", "10.0.0.9");
    }
    List<String> lines = Files.readAllLines(file);
    Map<String, Object> login = AuditLogTest.parse(lines.get(1));
    Map<String, Object> logout = AuditLogTest.parse(lines.get(2));
    assertEquals("authenticate", logout.get("action"));
    assertEquals("success", logout.get("outcome"));
    assertEquals("admin", logout.get("actor"));
    assertEquals("logout", logout.get("reason"));
    assertEquals(login.get("detail"), logout.get("detail"));
    assertEquals(login.keySet(), logout.keySet());
  }
}
