package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.testsupport.HostileFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile files given to {@code srdma cert}: one line on stderr naming the file, a typed exit
 * status, never a hang, a stack trace or a file taken for something else.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CertHostileInputTest {
  @TempDir Path tmp;
  private Path ca;

  @BeforeEach
  void createCa() {
    ca = tmp.resolve("ca");
    assertEquals(0, CliRun.of("ca", "init", "--dir", ca.toString()).exit());
  }

  private static void assertOneLine(CliRun r, String command, String... says) {
    assertTrue(r.err().startsWith("srdma " + command + ": "), r.err());
    assertEquals(1, r.err().strip().lines().count(), r.err());
    assertFalse(r.err().contains("Exception") || r.err().contains("Error:"), r.err());
    for (String s : says) {
      assertTrue(r.err().contains(s), r.err());
    }
  }

  @Test
  void revokeRefusesAPipeAsItsTargetWithoutTakingItForASerial() throws Exception {
    Path fifo = tmp.resolve("cert.pem");
    HostileFiles.mkfifo(fifo);
    CliRun r = CliRun.of("cert", "revoke", "--ca", ca.toString(), fifo.toString());
    assertEquals(2, r.exit(), r.err());
    assertOneLine(r, "cert revoke", fifo.toString(), "not a regular file");
  }

  @Test
  void showRefusesAsnNestedTooDeeplyWithOneLine() throws Exception {
    byte[] der = new byte[400_000];
    for (int i = 0; i < der.length / 2; i += 2) {
      der[i] = 0x30;
      der[i + 1] = (byte) 0x80;
    }
    Path deep = tmp.resolve("deep.crt");
    Files.writeString(
        deep,
        "-----BEGIN CERTIFICATE-----\n"
            + Base64.getMimeEncoder().encodeToString(der)
            + "\n-----END CERTIFICATE-----\n");
    CliRun r = CliRun.of("cert", "show", deep.toString());
    assertEquals(2, r.exit(), r.err());
    assertOneLine(r, "cert show", deep.toString(), "not valid PEM");
    CliRun revoke = CliRun.of("cert", "revoke", "--ca", ca.toString(), deep.toString());
    assertEquals(2, revoke.exit(), revoke.err());
    assertOneLine(revoke, "cert revoke", deep.toString(), "not valid PEM");
  }

  @Test
  void showRefusesGarbageBetweenPemMarkersWithOneLine() throws Exception {
    Path junk = tmp.resolve("junk.crt");
    Files.writeString(
        junk, "-----BEGIN CERTIFICATE-----\n!!not base64\u0007\n-----END CERTIFICATE-----\n");
    CliRun r = CliRun.of("cert", "show", "--ca", ca.toString(), junk.toString());
    assertEquals(2, r.exit(), r.err());
    assertOneLine(r, "cert show", junk.toString());
    assertFalse(r.err().contains("\u0007"), "no control character of the file on the terminal");
  }
}
