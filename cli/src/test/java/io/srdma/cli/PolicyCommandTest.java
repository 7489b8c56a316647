package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyCommandTest {
  @TempDir Path dir;
  private Path sample;

  @BeforeEach
  void copySample() throws Exception {
    sample = dir.resolve("policy.yaml");
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      Files.copy(in, sample);
    }
  }

  @Test
  void shouldExitZeroForAValidFile() {
    CliRun r = CliRun.of("policy", "check", sample.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(
        r.out().contains(": OK, 2 tenants, 5 roles, 5 peer entries, 2 console users"), r.out());
  }

  @Test
  void shouldExitOneListingEveryError() throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(
        bad,
        Files.readString(sample)
            .replace("size: 64MiB", "size: 64 MiBs")
            .replace("max-ttl: 30s", "max-ttl: forever")
            .replace("roles: [inference]", "roles: [inferense]"));
    CliRun r = CliRun.of("policy", "check", bad.toString());
    assertEquals(1, r.exit());
    String[] lines = r.err().strip().split("\\R");
    assertEquals(4, lines.length, r.err());
    assertTrue(
        lines[0].matches(
            java.util.regex.Pattern.quote(bad.toString()) + ":\\d+:\\d+: bad size '64 MiBs'.*"),
        lines[0]);
    assertTrue(lines[1].contains("bad duration 'forever'"), lines[1]);
    assertTrue(lines[2].contains("undefined role 'inferense'"), lines[2]);
    assertEquals("3 errors in " + bad, lines[3]);
  }

  @Test
  void shouldPrintOneLineAndNoStackTraceForHostileFiles() throws Exception {
    String head = "version: 1\ntenants:\n  acme: ";
    StringBuilder block = new StringBuilder("version: 1\ntenants:\n");
    for (int i = 1; i <= 1500; i++) {
      block.append("  ".repeat(i)).append("a:\n");
    }
    StringBuilder bomb = new StringBuilder(head + "{}\nconsole:\n  a0: &a0 [lol, lol]\n");
    for (int i = 1; i < 30; i++) {
      bomb.append("  a").append(i).append(": [*a").append(i - 1).append(", *a");
      bomb.append(i - 1).append("]\n");
    }
    String[][] cases = {
      {head + "[".repeat(1500) + "\n", ":3:39: nested more than 32"},
      {block.toString(), ":34:"},
      {head + "[x\u202e]\n", ":3:11: character U+202E"},
      {"version: \"1\"\ntenants: {}\n", ":1:10: version must be a whole number written"},
      {head.replace("acme", "host") + "{}\n", ":3:3: tenant name 'host' is reserved"},
      {bomb.toString(), ":5:7: anchors are not allowed"},
    };
    for (String[] c : cases) {
      Path bad = dir.resolve("hostile.yaml");
      Files.writeString(bad, c[0]);
      CliRun r = CliRun.of("policy", "check", bad.toString());
      assertEquals(1, r.exit(), r.err());
      String[] lines = r.err().strip().split("\\R");
      assertTrue(lines[0].startsWith(bad + c[1]), lines[0] + "\n  wanted " + c[1]);
      assertTrue(lines.length <= 60, r.err());
      assertTrue(!r.err().contains("\tat ") && !r.err().contains("Error:"), r.err());
      assertTrue(lines[lines.length - 1].matches("\\d+ errors? in " + Pattern.quote(bad + "")));
    }
  }

  @Test
  void shouldShareOneNameRuleWithCertificates() {
    // access-policy cannot depend on key-exchange, so the rule is written twice: keep them equal
    for (String name :
        List.of(
            "a",
            "acme",
            "trainer-1",
            "a-b-c",
            "0",
            "x".repeat(63),
            "",
            "-a",
            "a-",
            "a_b",
            "A",
            "a.b",
            "a b",
            "x".repeat(64),
            "é",
            "host")) {
      boolean policy = io.srdma.policy.PeerIdentity.isName(name);
      boolean keys;
      try {
        io.srdma.keys.PeerIdentity.checkName("peer", name);
        keys = true;
      } catch (io.srdma.keys.KeyExchangeException e) {
        keys = false;
      }
      assertEquals(keys, policy, "'" + name + "'");
    }
  }

  @Test
  void shouldExitOneForAMissingFile() {
    CliRun r = CliRun.of("policy", "check", dir.resolve("none.yaml").toString());
    assertEquals(1, r.exit());
    assertTrue(r.err().contains("cannot read policy file"), r.err());
  }

  @Test
  void shouldExplainAnAllowedRequestWithRoleAndPermission() {
    CliRun r =
        CliRun.of(
            "policy",
            "explain",
            sample.toString(),
            "--peer",
            "srdma://acme/trainer-1",
            "--region",
            "kvcache",
            "--op",
            "write",
            "--bytes",
            "4MiB",
            "--ttl",
            "1h");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().startsWith("decision:   ALLOW"), r.out());
    assertTrue(r.out().contains("peer entry: srdma://acme/trainer-* -> roles trainer"), r.out());
    assertTrue(r.out().contains("role:       acme/trainer"), r.out());
    assertTrue(r.out().contains("permission: region:read,write:kvcache"), r.out());
    assertTrue(r.out().contains("ttl:        PT10M (effective)"), r.out());
  }

  @Test
  void shouldExplainADenial() {
    CliRun r =
        CliRun.of(
            "policy",
            "explain",
            sample.toString(),
            "--peer",
            "srdma://acme/dashboard",
            "--region",
            "kvcache",
            "--op",
            "WRITE");
    assertEquals(PolicyCommand.EXIT_DENIED, r.exit(), r.err());
    assertTrue(r.out().startsWith("decision:   DENY NOT_PERMITTED"), r.out());

    CliRun cross =
        CliRun.of(
            "policy",
            "explain",
            sample.toString(),
            "--peer",
            "srdma://acme/trainer-1",
            "--tenant",
            "globex",
            "--region",
            "kvcache",
            "--op",
            "read");
    assertEquals(PolicyCommand.EXIT_DENIED, cross.exit());
    assertTrue(cross.out().startsWith("decision:   DENY TENANT_MISMATCH"), cross.out());

    CliRun big =
        CliRun.of(
            "policy",
            "explain",
            sample.toString(),
            "--peer",
            "srdma://acme/trainer-1",
            "--region",
            "kvcache",
            "--op",
            "read,write",
            "--bytes",
            "17MiB");
    assertTrue(big.out().startsWith("decision:   DENY TOO_LARGE"), big.out());
    assertTrue(big.out().contains("role:       acme/trainer"), big.out());
  }

  @Test
  void shouldRejectBadArguments() {
    assertEquals(
        2,
        CliRun.of(
                "policy",
                "explain",
                sample.toString(),
                "--peer",
                "acme",
                "--region",
                "kvcache",
                "--op",
                "read")
            .exit());
    assertEquals(
        2,
        CliRun.of(
                "policy",
                "explain",
                sample.toString(),
                "--peer",
                "srdma://acme/t-1",
                "--region",
                "kvcache",
                "--op",
                "erase")
            .exit());
    assertEquals(2, CliRun.of("policy").exit());
  }

  @Test
  void shouldReadBytesInTheOneSizeGrammar() {
    // 16MiB is the sample's max-bytes-per-grant: 16MB (16 000 000) fits, 17MB does not
    String[] base = {
      "policy",
      "explain",
      null,
      "--peer",
      "srdma://acme/trainer-1",
      "--region",
      "kvcache",
      "--op",
      "write",
      "--bytes",
      null
    };
    base[2] = sample.toString();
    base[10] = "16MB";
    CliRun ok = CliRun.of(base);
    assertTrue(ok.out().contains("+16000000)"), ok.out() + ok.err());
    base[10] = "4k";
    CliRun ambiguous = CliRun.of(base);
    assertEquals(2, ambiguous.exit());
    assertTrue(
        ambiguous.err().contains("--bytes: '4k' has an ambiguous or misspelt unit 'k'"),
        ambiguous.err());
    base[10] = "20EiB";
    CliRun huge = CliRun.of(base);
    assertEquals(2, huge.exit());
    assertTrue(huge.err().contains("--bytes: '20EiB' is too large"), huge.err());
  }

  @Test
  void shouldHashAPasswordFromStandardInput() {
    java.io.InputStream stdin = System.in;
    try {
      System.setIn(
          new java.io.ByteArrayInputStream(
              "pw-123\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      CliRun r = CliRun.of("policy", "hash-password", "--bcrypt");
      assertEquals(0, r.exit(), r.err());
      assertTrue(r.out().startsWith("$shiro2$2y$"), r.out());
    } finally {
      System.setIn(stdin);
    }
  }
}
