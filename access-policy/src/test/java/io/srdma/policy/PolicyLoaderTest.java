package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyLoaderTest {
  static final String MINIMAL =
      """
      version: 1
      tenants:
        acme:
          regions:
            kv: {size: 4KiB}
          roles:
            writer:
              permissions: [region:write:kv]
              operations: [write]
              max-bytes-per-grant: 1KiB
              max-ttl: 5s
              max-live-grants: 2
          peers:
            - identity: srdma://acme/w-*
              roles: [writer]
      """;

  @Test
  void shouldLoadTheSamplePolicy() {
    Policy p = new PolicyLoader().loadSample();
    assertEquals(Set.of("acme", "globex"), p.tenants().keySet());
    Tenant acme = p.tenants().get("acme");
    assertEquals(64L << 20, acme.regions().get("kvcache").size());
    Role trainer = acme.roles().get("trainer");
    assertEquals(Duration.ofMinutes(10), trainer.maxTtl());
    assertEquals(16L << 20, trainer.maxBytesPerGrant());
    assertEquals(8, trainer.maxLiveGrants());
    assertEquals(Set.of(Operation.READ, Operation.WRITE), trainer.operations());
    assertEquals("region:read,write:kvcache", trainer.permissions().get(0).written());
    assertEquals(Set.of("admin", "auditor"), p.consoleUsers().keySet());
    assertEquals(64, p.sha256().length());
  }

  @Test
  void shouldLoadAFile(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("p.yaml");
    Files.writeString(f, MINIMAL);
    Policy p = new PolicyLoader().load(f);
    assertEquals(f.toString(), p.source());
    assertNotNull(p.tenants().get("acme").peerFor("srdma://acme/w-1"));
    assertNull(p.tenants().get("acme").peerFor("srdma://acme/r-1"));
  }

  @Test
  void shouldRejectOversizedFilesBeforeParsing(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("big.yaml");
    Files.writeString(f, MINIMAL + "#" + "x".repeat(2000) + "\n");
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader(1024).load(f));
    assertEquals(1, e.errors().size());
    assertTrue(e.errors().get(0).toString().startsWith(f + ":1:1: the file is "), e.getMessage());
  }

  @Test
  void shouldRejectInvalidUtf8() {
    byte[] bad = {'v', ':', ' ', (byte) 0xC3, (byte) 0x28};
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("x", bad));
    assertEquals("x:1:1: the file is not valid UTF-8", e.errors().get(0).toString());
  }

  @Test
  void shouldRejectAnEmptyFile() {
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("e", ""));
    assertEquals("e:1:1: the policy file is empty", e.errors().get(0).toString());
  }

  @Test
  void shouldRejectSeveralDocuments() {
    assertThrows(
        PolicyRejectedException.class,
        () -> new PolicyLoader().parse("m", MINIMAL + "---\n" + MINIMAL));
  }

  @Test
  void shouldRejectABillionLaughsWithoutExpandingIt() {
    StringBuilder b = new StringBuilder("version: 1\ntenants: {}\nl0: &l0 [lol]\n");
    for (int i = 1; i < 30; i++) {
      b.append("l").append(i).append(": &l").append(i).append(" [");
      for (int j = 0; j < 9; j++) {
        b.append(j == 0 ? "" : ", ").append("*l").append(i - 1);
      }
      b.append("]\n");
    }
    PolicyRejectedException e =
        assertThrows(
            PolicyRejectedException.class, () -> new PolicyLoader().parse("bomb", b.toString()));
    assertTrue(e.errors().stream().allMatch(x -> x.reason().contains("not allowed")));
  }

  @Test
  void shouldNeverEchoAPasswordHashValueInErrors() {
    String yaml =
        "version: 1\ntenants: {}\nconsole:\n  users:\n    a:\n      password-hash: "
            + "hunter2-secret\n      roles: [admin]\n";
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("pw", yaml));
    assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
  }

  @Test
  void shouldListEveryErrorSortedByPosition() {
    String yaml = MINIMAL.replace("5s", "5 sec").replace("4KiB", "4 K").replace("[write]", "[rw]");
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("p", yaml));
    assertEquals(3, e.errors().size(), e.getMessage());
    for (int i = 1; i < e.errors().size(); i++) {
      assertTrue(e.errors().get(i - 1).line() <= e.errors().get(i).line());
    }
    assertEquals(PolicyException.Category.INVALID_POLICY, e.category());
  }

  @Test
  void shouldKeepExactPeersBesideAnOverlappingPattern() {
    String yaml =
        MINIMAL + "      - identity: srdma://acme/w-admin\n" + "        roles: [writer]\n";
    Policy p = new PolicyLoader().parse("p", yaml);
    Tenant t = p.tenants().get("acme");
    assertEquals("srdma://acme/w-admin", t.peerFor("srdma://acme/w-admin").pattern().text());
    assertEquals("srdma://acme/w-*", t.peerFor("srdma://acme/w-2").pattern().text());
  }

  @Test
  void shouldRejectEmptyAndNullValues() {
    String yaml =
        "version: 1\ntenants:\n  acme:\n    regions:\n      a: {size: ~}\n      b:\n"
            + "        size:\n      c: {size: 'null'}\n";
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("n", yaml));
    assertEquals(
        java.util.List.of(
            "n:5:17: size must not be empty",
            "n:7:14: size must not be empty",
            "n:8:17: size must be a size written without quotes, found the text 'null'"),
        e.errors().stream().map(PolicyError::toString).toList());
  }

  @Test
  void shouldReadSizesAndDurations() {
    assertEquals(64L << 20, Units.parseSize("64MiB").getAsLong());
    assertEquals(4096, Units.parseSize("4096").getAsLong());
    assertEquals(2_000_000, Units.parseSize("2MB").getAsLong());
    assertEquals(3, Units.parseSize("3 B").getAsLong());
    assertTrue(Units.parseSize("0").isEmpty());
    assertTrue(Units.parseSize("-1").isEmpty());
    assertTrue(Units.parseSize("1.5GiB").isEmpty());
    assertTrue(Units.parseSize("9999999999TiB").isEmpty());
    assertTrue(Units.parseSize("64mib").isEmpty());
    assertEquals(Duration.ofMillis(250), Units.parseDuration("250ms"));
    assertEquals(Duration.ofHours(2), Units.parseDuration("2h"));
    assertEquals(Duration.ofDays(1), Units.parseDuration("1d"));
    assertNull(Units.parseDuration("0s"));
    assertEquals(Units.MAX_DURATION, Units.parseDuration("36500d"));
    assertNull(Units.parseDuration("36501d"), "over 100 years");
    assertNull(Units.parseDuration("999999999999d"), "its milliseconds overflow a long");
    assertNull(Units.parseDuration("10"));
    assertNull(Units.parseDuration("1w"));
  }

  @Test
  void shouldDecodeTheSampleAsUtf8() {
    byte[] bytes = MINIMAL.getBytes(StandardCharsets.UTF_8);
    assertEquals(PolicyLoader.sha256(bytes), new PolicyLoader().parse("p", bytes).sha256());
  }
}
