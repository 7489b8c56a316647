package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
