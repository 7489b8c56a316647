package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Argument values echoed in error messages reach terminals and logs: never as control codes. */
class CliArgumentEchoTest {
  @TempDir Path tmp;

  private static final String ESC_TITLE = "\u001b]0;owned\u0007";

  private Path policy() throws Exception {
    Path p = tmp.resolve("policy.yaml");
    try (var in =
        io.srdma.policy.PolicyLoader.class.getResourceAsStream(
            io.srdma.policy.PolicyLoader.SAMPLE_RESOURCE)) {
      Files.write(p, in.readAllBytes());
    }
    return p;
  }

  @Test
  void shouldNotEchoControlCharactersOfABadTtl() throws Exception {
    CliRun r =
        CliRun.of(
            "policy",
            "explain",
            policy().toString(),
            "--peer",
            "srdma://acme/trainer-1",
            "--region",
            "r",
            "--op",
            "read",
            "--ttl",
            ESC_TITLE + "1m");
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().contains("--ttl"), r.err());
    assertFalse(r.err().contains("\u001b"), "ESC echoed raw: " + r.err());
    assertFalse(r.err().contains("\u0007"), "BEL echoed raw: " + r.err());
  }

  @Test
  void shouldNotEchoControlCharactersOfABadPeer() throws Exception {
    CliRun r =
        CliRun.of(
            "policy",
            "explain",
            policy().toString(),
            "--peer",
            "x" + ESC_TITLE,
            "--region",
            "r",
            "--op",
            "read");
    assertEquals(2, r.exit(), r.err());
    assertFalse(r.err().contains("\u001b"), "ESC echoed raw: " + r.err());
  }

  @Test
  void shouldRefuseADeviceAsAPolicyFile() {
    CliRun r = CliRun.of("policy", "check", "/dev/zero");
    assertEquals(1, r.exit(), r.err());
    assertTrue(r.err().contains("not a regular file"), r.err());
  }

  @Test
  void shouldRefuseADeviceAsAPolicyToPush() throws Exception {
    // read whole before anything else, /dev/zero ran the JVM out of memory
    CliRun r =
        CliRun.of(
            "policy",
            "push",
            "/dev/zero",
            "--cluster",
            tmp.resolve("serve.yaml").toString(),
            "--ca",
            tmp.resolve("ca").toString());
    assertEquals(1, r.exit(), r.err());
    assertTrue(r.err().contains("/dev/zero"), r.err());
  }
}
