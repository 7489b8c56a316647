package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaCommandTest {
  @TempDir Path tmp;

  @Test
  void shouldCreateACaWithAnOwnerOnlyKey() throws Exception {
    Path dir = tmp.resolve("ca");
    CliRun r = CliRun.of("ca", "init", "--dir", dir.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("created deployment CA"), r.out());
    assertEquals(
        "rw-------",
        PosixFilePermissions.toString(
            Files.getPosixFilePermissions(dir.resolve(DeploymentCa.CA_KEY))));
    assertTrue(Files.isRegularFile(dir.resolve(DeploymentCa.CRL)));
  }

  @Test
  void shouldRefuseToOverwriteAnExistingCa() throws Exception {
    Path dir = tmp.resolve("ca");
    assertEquals(0, CliRun.of("ca", "init", "--dir", dir.toString()).exit());
    byte[] key = Files.readAllBytes(dir.resolve(DeploymentCa.CA_KEY));
    CliRun again = CliRun.of("ca", "init", "--dir", dir.toString());
    assertEquals(1, again.exit());
    assertTrue(again.err().contains("already holds a CA"), again.err());
    assertTrue(java.util.Arrays.equals(key, Files.readAllBytes(dir.resolve(DeploymentCa.CA_KEY))));
  }

  @Test
  void shouldEncryptTheCaKeyWithAPassphraseFile() throws Exception {
    Path dir = tmp.resolve("ca");
    Path pass = tmp.resolve("pass");
    Files.writeString(pass, "a long passphrase\n");
    assertEquals(
        0,
        CliRun.of("ca", "init", "--dir", dir.toString(), "--passphrase-file", pass.toString())
            .exit());
    assertTrue(
        new String(Files.readAllBytes(dir.resolve(DeploymentCa.CA_KEY)), StandardCharsets.US_ASCII)
            .contains("ENCRYPTED PRIVATE KEY"));
    CliRun wrong = CliRun.of("ca", "crl", "--dir", dir.toString());
    assertEquals(1, wrong.exit());
    assertTrue(wrong.err().contains("no passphrase"), wrong.err());
    CliRun ok =
        CliRun.of("ca", "crl", "--dir", dir.toString(), "--passphrase-file", pass.toString());
    assertEquals(0, ok.exit(), ok.err());
  }
}
