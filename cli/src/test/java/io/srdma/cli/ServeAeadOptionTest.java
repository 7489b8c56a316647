package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** A bad --aead is a usage error (exit 2, nothing started), not a failure to start (exit 1). */
class ServeAeadOptionTest {
  @TempDir Path dir;

  @Test
  void shouldRefuseAnUnknownAeadModeAsAUsageErrorBeforeAnythingStarts() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    Path certs = Files.createDirectories(dir.resolve("certs"));
    ca.issuePeer(PeerIdentity.of("host", "host-1"), Duration.ofDays(1))
        .writeTo(certs.resolve("host.crt"), certs.resolve("host.key"), null);
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      Files.write(dir.resolve("policy.yaml"), in.readAllBytes());
    }
    Path audit = Files.createDirectories(dir.resolve("audit"));
    Path config = dir.resolve("serve.yaml");
    Files.writeString(
        config,
        "version: 1\nlisten: 127.0.0.1:0\nprovider: soft\n"
            + "tls:\n  certificate: certs/host.crt\n  key: certs/host.key\n"
            + "  ca-certificate: ca/ca.crt\n  crl: ca/crl.pem\n"
            + "policy:\n  file: policy.yaml\naudit:\n  file: audit/audit.log\n",
        StandardCharsets.UTF_8);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(new ServeCommand());
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int exit = cl.execute("--config", config.toString(), "--aead", "rot13");
    assertEquals(2, exit, err.toString());
    assertTrue(err.toString().contains("rot13"), err.toString());
    assertFalse(err.toString().contains("srdma serve: could not start"), err.toString());
    try (var files = Files.list(audit)) {
      assertEquals(0, files.count(), "nothing written beside the audit log");
    }
  }
}
