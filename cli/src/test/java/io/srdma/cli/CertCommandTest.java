package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Pem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertCommandTest {
  @TempDir Path tmp;
  private Path ca;
  private Path out;

  @BeforeEach
  void createCa() {
    ca = tmp.resolve("ca");
    out = tmp.resolve("out");
    assertEquals(0, CliRun.of("ca", "init", "--dir", ca.toString()).exit());
  }

  private CliRun issue(String tenant, String peer) {
    return CliRun.of(
        "cert",
        "issue",
        "--ca",
        ca.toString(),
        "--tenant",
        tenant,
        "--peer",
        peer,
        "--out",
        out.toString());
  }

  @Test
  void shouldIssueAPeerCertificateWithTheIdentity() throws Exception {
    CliRun r =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            ca.toString(),
            "--tenant",
            "acme",
            "--peer",
            "kv-1",
            "--days",
            "7",
            "--out",
            out.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("issued peer certificate srdma://acme/kv-1"), r.out());
    X509Certificate cert = Pem.readCertificate(out.resolve("acme.kv-1.crt"));
    assertEquals(PeerIdentity.of("acme", "kv-1"), PeerIdentity.fromCertificate(cert));
    long days =
        java.time.Duration.between(java.time.Instant.now(), cert.getNotAfter().toInstant())
            .toDays();
    assertTrue(days >= 6 && days <= 7, "validity " + days);
    assertEquals(
        "rw-------",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolve("acme.kv-1.key"))));
  }

  @Test
  void shouldIssueARegionHostCertificateForServingOnly() throws Exception {
    CliRun r =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            ca.toString(),
            "--tenant",
            "host",
            "--peer",
            "h-1",
            "--out",
            out.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("issued host certificate srdma://host/h-1"), r.out());
    X509Certificate cert = Pem.readCertificate(out.resolve("host.h-1.crt"));
    assertEquals(java.util.List.of("1.3.6.1.5.5.7.3.1"), cert.getExtendedKeyUsage());
  }

  @Test
  void shouldIssueAConsoleCertificateForAHost() throws Exception {
    CliRun r =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            ca.toString(),
            "--host",
            "console.example",
            "--out",
            out.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(Files.isRegularFile(out.resolve("console.example.crt")));
    CliRun bad =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            ca.toString(),
            "--host",
            "../evil",
            "--out",
            tmp.resolve("other").toString());
    assertEquals(2, bad.exit(), bad.err());
    assertTrue(bad.err().contains("host must be a DNS name"), bad.err());
    assertFalse(Files.exists(tmp.resolve("other")), "nothing written");
    assertFalse(Files.exists(tmp.resolve("evil.crt")));
  }

  @Test
  void shouldNeverOverwriteAnOutputFile() throws Exception {
    assertEquals(0, issue("acme", "a").exit());
    byte[] before = Files.readAllBytes(out.resolve("acme.a.key"));
    CliRun again = issue("acme", "a");
    assertEquals(1, again.exit());
    assertTrue(again.err().contains("already exists; not overwriting it"), again.err());
    assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(out.resolve("acme.a.key"))));
  }

  @Test
  void shouldSayWhenTheCaIsMissing() {
    CliRun r =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            tmp.resolve("nope").toString(),
            "--tenant",
            "acme",
            "--peer",
            "a",
            "--out",
            out.toString());
    assertEquals(1, r.exit());
    assertTrue(r.err().contains("no deployment CA in"), r.err());
    assertFalse(Files.exists(out), "nothing written");
  }

  @Test
  void shouldRefuseBadNamesBeforeWritingAnything() {
    for (String[] names :
        new String[][] {{"Acme", "a"}, {"acme", "a/b"}, {"acme", "../x"}, {"", "a"}, {"a", "-"}}) {
      CliRun r = issue(names[0], names[1]);
      assertEquals(2, r.exit(), String.join(" ", names) + ": " + r.err());
      assertTrue(r.err().contains("name must be 1-63 characters"), r.err());
    }
    assertFalse(Files.exists(out), "nothing written");
  }

  @Test
  void shouldRequireEitherAPeerOrAHost() {
    CliRun r = CliRun.of("cert", "issue", "--ca", ca.toString(), "--out", out.toString());
    assertEquals(2, r.exit());
    CliRun both =
        CliRun.of(
            "cert",
            "issue",
            "--ca",
            ca.toString(),
            "--tenant",
            "a",
            "--peer",
            "b",
            "--host",
            "h",
            "--out",
            out.toString());
    assertEquals(2, both.exit());
  }

  @Test
  void shouldRevokeBySerialAndByFileAndShowIt() throws Exception {
    assertEquals(0, issue("acme", "a").exit());
    assertEquals(0, issue("acme", "b").exit());
    Path a = out.resolve("acme.a.crt");
    Path b = out.resolve("acme.b.crt");
    String serialA = Pem.readCertificate(a).getSerialNumber().toString(16);

    CliRun shown = CliRun.of("cert", "show", "--ca", ca.toString(), a.toString());
    assertEquals(0, shown.exit(), shown.err());
    assertTrue(shown.out().contains("identity:  srdma://acme/a"), shown.out());
    assertTrue(shown.out().contains("serial:    " + serialA), shown.out());
    assertTrue(shown.out().contains("status:    valid"), shown.out());

    CliRun bySerial = CliRun.of("cert", "revoke", "--ca", ca.toString(), serialA);
    assertEquals(0, bySerial.exit(), bySerial.err());
    assertTrue(bySerial.out().contains("revoked serial " + serialA), bySerial.out());
    CliRun byFile = CliRun.of("cert", "revoke", "--ca", ca.toString(), b.toString());
    assertEquals(0, byFile.exit(), byFile.err());
    CliRun twice = CliRun.of("cert", "revoke", "--ca", ca.toString(), b.toString());
    assertEquals(0, twice.exit());
    assertTrue(twice.out().contains("already revoked"), twice.out());

    assertTrue(
        DeploymentCa.open(ca, null).crl().isRevoked(Pem.readCertificate(a))
            && DeploymentCa.open(ca, null).crl().isRevoked(Pem.readCertificate(b)));
    CliRun after = CliRun.of("cert", "show", "--ca", ca.toString(), a.toString());
    assertTrue(after.out().contains("status:    revoked"), after.out());
  }

  @Test
  void shouldRefuseUnknownOrMalformedSerials() {
    CliRun unknown = CliRun.of("cert", "revoke", "--ca", ca.toString(), "abcdef");
    assertEquals(2, unknown.exit());
    assertTrue(unknown.err().contains("never issued serial abcdef"), unknown.err());
    CliRun malformed = CliRun.of("cert", "revoke", "--ca", ca.toString(), "not-a-serial");
    assertEquals(2, malformed.exit());
    assertTrue(malformed.err().contains("serial must be hexadecimal"), malformed.err());
  }

  @Test
  void shouldShowACertificateWithoutACa() {
    assertEquals(0, issue("acme", "a").exit());
    CliRun r = CliRun.of("cert", "show", out.resolve("acme.a.crt").toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("key:       EC P-256, SHA256withECDSA"), r.out());
    assertTrue(r.out().contains("usage:     digitalSignature, clientAuth\n"), r.out());
    CliRun missing = CliRun.of("cert", "show", tmp.resolve("missing.crt").toString());
    assertEquals(1, missing.exit());
    assertTrue(missing.err().contains("does not exist"), missing.err());
  }
}
