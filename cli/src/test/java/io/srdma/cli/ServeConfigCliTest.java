package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code srdma serve} with hostile configuration and policy files: one error each, exit 2, no stack
 * trace. The reader itself is tested in the server module (io.srdma.server.ServeConfigTest).
 */
class ServeConfigCliTest {
  private static final String MIN =
      "version: 1\nlisten: 127.0.0.1:0\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n";

  @TempDir Path dir;

  @Test
  void srdmaServeWithAHostileConfigPrintsOneErrorAndExitsTwo() throws Exception {
    Path f = dir.resolve("hostile.yaml");
    Files.writeString(f, MIN + "limits: " + "[".repeat(1500) + "\n", StandardCharsets.UTF_8);
    CliRun r = CliRun.of("serve", "--config", f.toString());
    assertEquals(2, r.exit(), r.err());
    List<String> lines = r.err().strip().lines().toList();
    assertEquals(2, lines.size(), r.err());
    assertTrue(lines.get(0).startsWith(f + ":6:40: nested more than 32"), lines.get(0));
    assertEquals("srdma serve: 1 error in " + f + "; nothing was started", lines.get(1));
  }

  @Test
  void srdmaServeWithAHostilePolicyPrintsItsErrorAndExitsTwo() throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, MIN, StandardCharsets.UTF_8);
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(
        policy, "version: 1\ntenants:\n  acme: " + "[".repeat(1500) + "\n", StandardCharsets.UTF_8);
    CliRun r = CliRun.of("serve", "--config", f.toString());
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().contains(policy + ":3:39: nested more than 32"), r.err());
    assertFalse(r.err().contains("StackOverflowError"), r.err());
    assertFalse(r.err().contains("\tat "), r.err());
    assertTrue(r.err().lines().count() < 12, r.err());
  }
}
