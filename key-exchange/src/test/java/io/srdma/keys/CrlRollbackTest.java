package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attacker who can put an older, still valid revocation list back in place (a stale copy on a
 * file share, a restored backup) tries to un-revoke a certificate: the list in force stays.
 */
class CrlRollbackTest {
  @TempDir Path tmp;
  private TestPki pki;
  private Path crlFile;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
    crlFile = pki.dir.resolve(DeploymentCa.CRL);
  }

  private KeyExchangeException.Reason refusal(DeploymentTrust trust, X509Certificate c) {
    return assertThrows(
            KeyExchangeException.class,
            () -> trust.verify(new X509Certificate[] {c}, CertificateUsage.TLS_CLIENT))
        .reason();
  }

  /** Replaces the CRL file and makes sure the watcher sees a change. */
  private void putBack(Path saved) throws Exception {
    Files.copy(saved, crlFile, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(crlFile, FileTime.from(Instant.now().plusSeconds(60)));
  }

  @Test
  void shouldRefuseAnOlderCrlPutBackInPlace() throws Exception {
    Path saved = tmp.resolve("old-crl.pem");
    Files.copy(crlFile, saved);
    Credential c = pki.peer("acme", "gone");
    RevocationList list = RevocationList.watching(crlFile, pki.ca.certificate());
    DeploymentTrust trust = DeploymentTrust.of(pki.ca.certificate(), list);
    trust.verify(new X509Certificate[] {c.certificate()}, CertificateUsage.TLS_CLIENT);
    pki.ca.revoke(c.certificate());
    assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, refusal(trust, c.certificate()));
    BigInteger inForce = list.number();

    putBack(saved);
    // still revoked: the rolled-back list was refused on the next check
    assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, refusal(trust, c.certificate()));
    assertEquals(inForce, list.number());
    KeyExchangeException e = assertThrows(KeyExchangeException.class, list::reload);
    assertEquals(KeyExchangeException.Reason.CRL_ROLLBACK, e.reason());
    assertTrue(e.getMessage().contains("older"), e.getMessage());
  }

  @Test
  void shouldRefuseADifferentCrlOfTheSameNumber() throws Exception {
    Credential c = pki.peer("acme", "gone");
    pki.ca.revoke(c.certificate());
    RevocationList list = RevocationList.watching(crlFile, pki.ca.certificate());
    DeploymentTrust trust = DeploymentTrust.of(pki.ca.certificate(), list);
    assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, refusal(trust, c.certificate()));

    // the CA's key signs a list with the number in force but without the revocation
    PrivateKey caKey = Pem.readPrivateKey(pki.dir.resolve(DeploymentCa.CA_KEY), null);
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    X509CRL forged =
        new CertificateIssuer(new SecureRandom())
            .crl(pki.ca.certificate(), caKey, Map.of(), list.number(), now, now.plusSeconds(3600));
    Path file = tmp.resolve("same-number.pem");
    Files.write(file, Pem.toPem(forged).getBytes(StandardCharsets.US_ASCII));
    putBack(file);
    assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, refusal(trust, c.certificate()));
    assertEquals(
        KeyExchangeException.Reason.CRL_ROLLBACK,
        assertThrows(KeyExchangeException.class, () -> list.update(forged)).reason());
  }

  @Test
  void shouldKeepTheHighWaterMarkAcrossAnUnusableList() throws Exception {
    Path saved = tmp.resolve("old-crl.pem");
    Files.copy(crlFile, saved);
    Credential c = pki.peer("acme", "gone");
    pki.ca.revoke(c.certificate());
    DeploymentTrust trust = pki.trust();
    assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, refusal(trust, c.certificate()));
    // first garbage (fail closed), then the old list: still not accepted
    Files.write(crlFile, "garbage".getBytes(StandardCharsets.US_ASCII));
    Files.setLastModifiedTime(crlFile, FileTime.from(Instant.now().plusSeconds(30)));
    assertEquals(
        KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN, refusal(trust, c.certificate()));
    putBack(saved);
    assertEquals(
        KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN, refusal(trust, c.certificate()));
  }

  @Test
  void shouldIssueIncreasingCrlNumbers() {
    RevocationList list = RevocationList.of(pki.ca.crl(), pki.ca.certificate());
    BigInteger first = list.number();
    pki.ca.revoke(pki.peer("acme", "a").certificate());
    BigInteger second = RevocationList.crlNumber(pki.ca.crl());
    pki.ca.republishCrl();
    BigInteger third = RevocationList.crlNumber(pki.ca.crl());
    assertTrue(first.compareTo(second) < 0 && second.compareTo(third) < 0);
    list.update(pki.ca.crl()); // a newer list is taken
    assertEquals(third, list.number());
  }

  @Test
  void shouldNumberAboveTheClockEvenAfterAnOldCrlIsRestoredAtTheCa() throws Exception {
    Path saved = tmp.resolve("old-crl.pem");
    Files.copy(crlFile, saved);
    pki.ca.revoke(pki.peer("acme", "a").certificate());
    BigInteger seen = RevocationList.crlNumber(pki.ca.crl());
    Files.copy(saved, crlFile, StandardCopyOption.REPLACE_EXISTING);
    // the CA numbers by the clock in ms: let the clock pass the number already seen
    while (System.currentTimeMillis() <= seen.longValue()) {
      Thread.onSpinWait();
    }
    pki.ca.revoke(pki.peer("acme", "b").certificate());
    assertTrue(RevocationList.crlNumber(pki.ca.crl()).compareTo(seen) > 0);
  }
}
