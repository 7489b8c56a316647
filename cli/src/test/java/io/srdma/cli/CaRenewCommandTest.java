package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.Pem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code srdma ca renew}: the CA certificate again over the same key; issued ones stay valid. */
class CaRenewCommandTest {
  @TempDir Path tmp;
  private Path ca;

  @BeforeEach
  void createCa() {
    ca = tmp.resolve("ca");
    assertEquals(0, CliRun.of("ca", "init", "--dir", ca.toString()).exit());
  }

  @Test
  void shouldRenewOverTheSameKeyAndKeepIssuedCertificatesValid() throws Exception {
    Path out = tmp.resolve("out");
    CliRun issued =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            ca.toString(),
            "--tenant",
            "acme",
            "--peer",
            "p",
            "--out",
            out.toString());
    assertEquals(0, issued.exit(), issued.err());
    X509Certificate old = Pem.readCertificate(ca.resolve("ca.crt"));
    byte[] key = Files.readAllBytes(ca.resolve("ca.key"));

    CliRun r = CliRun.of("ca", "renew", "--dir", ca.toString(), "--days", "365");
    assertEquals(0, r.exit(), r.err());
    X509Certificate renewed = Pem.readCertificate(ca.resolve("ca.crt"));
    assertTrue(r.out().contains("renewed deployment CA"), r.out());
    assertTrue(r.out().contains(renewed.getNotAfter().toInstant().toString()), r.out());
    assertTrue(r.out().contains(old.getNotAfter().toInstant().toString()), r.out());
    assertEquals(old.getPublicKey(), renewed.getPublicKey());
    assertEquals(old.getSubjectX500Principal(), renewed.getSubjectX500Principal());
    assertNotEquals(old.getSerialNumber(), renewed.getSerialNumber());
    long days = Duration.between(Instant.now(), renewed.getNotAfter().toInstant()).toDays();
    assertTrue(days >= 364 && days <= 365, "validity " + days);
    assertArrayEquals(key, Files.readAllBytes(ca.resolve("ca.key")), "the key is not touched");

    CliRun show =
        CliRun.of("cert", "show", "--ca", ca.toString(), out.resolve("acme.p.crt").toString());
    assertEquals(0, show.exit(), show.err());
    assertTrue(show.out().contains("status:    valid"), show.out());
  }

  @Test
  void shouldRefuseWhenTheKeyIsNotTheCertificatesAndLeaveCaCrtAlone() throws Exception {
    Path other = tmp.resolve("other");
    assertEquals(0, CliRun.of("ca", "init", "--dir", other.toString()).exit());
    Files.delete(ca.resolve("ca.key"));
    Files.copy(other.resolve("ca.key"), ca.resolve("ca.key"));
    byte[] before = Files.readAllBytes(ca.resolve("ca.crt"));
    CliRun r = CliRun.of("ca", "renew", "--dir", ca.toString());
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().startsWith("srdma ca renew: "), r.err());
    assertTrue(r.err().contains("is not the private key of"), r.err());
    assertArrayEquals(before, Files.readAllBytes(ca.resolve("ca.crt")));
  }

  @Test
  void shouldRefuseDaysOutOfRange() throws Exception {
    byte[] before = Files.readAllBytes(ca.resolve("ca.crt"));
    for (String days : new String[] {"0", "3651", "-1"}) {
      CliRun r = CliRun.of("ca", "renew", "--dir", ca.toString(), "--days", days);
      assertEquals(2, r.exit(), r.err());
      assertTrue(r.err().contains("--days must be 1 to 3650"), r.err());
    }
    assertArrayEquals(before, Files.readAllBytes(ca.resolve("ca.crt")));
  }
}
