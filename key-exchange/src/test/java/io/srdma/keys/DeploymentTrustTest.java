package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeploymentTrustTest {
  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
  }

  private KeyExchangeException.Reason refusal(X509Certificate cert, CertificateUsage usage) {
    return refusal(pki.trust(), cert, usage);
  }

  private static KeyExchangeException.Reason refusal(
      DeploymentTrust trust, X509Certificate cert, CertificateUsage usage) {
    return assertThrows(
            KeyExchangeException.class, () -> trust.verify(new X509Certificate[] {cert}, usage))
        .reason();
  }

  @Test
  void shouldAcceptEachCertificateOnlyInItsOwnRole() {
    X509Certificate tenant = pki.peer("acme", "a").certificate();
    X509Certificate host = pki.peer("host", "h").certificate();
    X509Certificate ca = pki.ca.certificate();
    assertEquals(
        PeerIdentity.of("acme", "a"),
        pki.trust().verify(new X509Certificate[] {tenant, ca}, CertificateUsage.TLS_CLIENT));
    assertEquals(
        PeerIdentity.host("h"),
        pki.trust().verify(new X509Certificate[] {host, ca}, CertificateUsage.TLS_SERVER));
    // a tenant peer cannot act as a host, a host cannot act as a tenant peer
    assertEquals(
        KeyExchangeException.Reason.WRONG_USAGE, refusal(tenant, CertificateUsage.TLS_SERVER));
    assertEquals(
        KeyExchangeException.Reason.WRONG_USAGE, refusal(host, CertificateUsage.TLS_CLIENT));
  }

  @Test
  void shouldKeepALegacyDualUsageCertificateInTheRoleItsIdentityNames() throws Exception {
    // certificates issued before the profiles were split carry clientAuth and serverAuth
    java.security.KeyPair keys =
        new CertificateIssuer(new java.security.SecureRandom()).newKeyPair();
    java.security.PrivateKey caKey = Pem.readPrivateKey(pki.dir.resolve(DeploymentCa.CA_KEY), null);
    X509Certificate ca = pki.ca.certificate();
    X509Certificate tenant = LegacyCertificates.dualUsage(ca, caKey, keys, "srdma://acme/old");
    X509Certificate host = LegacyCertificates.dualUsage(ca, caKey, keys, "srdma://host/old");
    assertEquals(
        PeerIdentity.of("acme", "old"),
        pki.trust().verify(new X509Certificate[] {tenant}, CertificateUsage.TLS_CLIENT));
    assertEquals(
        KeyExchangeException.Reason.WRONG_USAGE, refusal(tenant, CertificateUsage.TLS_SERVER));
    assertEquals(
        KeyExchangeException.Reason.WRONG_USAGE, refusal(host, CertificateUsage.TLS_CLIENT));
  }

  @Test
  void shouldSayWhyACertificateIsRefused() {
    assertEquals(
        KeyExchangeException.Reason.CERTIFICATE_EXPIRED,
        refusal(pki.expired("acme", "a").certificate(), CertificateUsage.TLS_CLIENT));
    assertEquals(
        KeyExchangeException.Reason.CERTIFICATE_NOT_YET_VALID,
        refusal(pki.notYetValid("acme", "a").certificate(), CertificateUsage.TLS_CLIENT));
    assertEquals(
        KeyExchangeException.Reason.CERTIFICATE_REVOKED,
        refusal(pki.revoked("acme", "a").certificate(), CertificateUsage.TLS_CLIENT));
    TestPki foreign = TestPki.create(tmp.resolve("foreign"));
    assertEquals(
        KeyExchangeException.Reason.UNTRUSTED_ISSUER,
        refusal(foreign.peer("acme", "a").certificate(), CertificateUsage.TLS_CLIENT));
    assertEquals(
        KeyExchangeException.Reason.WRONG_USAGE,
        refusal(pki.consoleServer("localhost").certificate(), CertificateUsage.TLS_CLIENT));
    assertEquals(
        KeyExchangeException.Reason.NO_IDENTITY,
        refusal(pki.consoleServer("localhost").certificate(), CertificateUsage.TLS_SERVER));
    assertEquals(
        KeyExchangeException.Reason.WRONG_USAGE,
        refusal(pki.ca.certificate(), CertificateUsage.TLS_CLIENT));
    assertEquals(
        KeyExchangeException.Reason.NO_CERTIFICATE,
        assertThrows(
                KeyExchangeException.class,
                () -> pki.trust().verify(new X509Certificate[0], CertificateUsage.TLS_CLIENT))
            .reason());
  }

  @Test
  void shouldPrintAPeerChosenIssuerNameWithoutControlCharacters() {
    // a spoofed server's self-signed issuer name reaches the client's exception text, then its log
    assertEquals(
        "CN=evil\\u000d\\u000a2026-12-06 INFO forged line\\u001b[2J",
        DeploymentTrust.printable("CN=evil\r\n2026-12-06 INFO forged line\u001b[2J"));
    assertEquals("CN=caf\\u00e9", DeploymentTrust.printable("CN=caf\u00e9"));
    String huge = DeploymentTrust.printable("CN=" + "x".repeat(10_000));
    assertEquals(DeploymentTrust.NAME_LIMIT + 3, huge.length());
    assertTrue(huge.endsWith("..."));
  }

  @Test
  void shouldJudgeValidityAtTheTrustsClock() {
    X509Certificate c = pki.peer("acme", "a").certificate();
    DeploymentTrust later =
        pki.trust().withClock(Clock.fixed(Instant.now().plus(Duration.ofDays(3)), ZoneOffset.UTC));
    assertEquals(
        KeyExchangeException.Reason.CERTIFICATE_EXPIRED,
        refusal(later, c, CertificateUsage.TLS_CLIENT));
  }

  @Test
  void shouldSeeARevocationWithoutRestarting() {
    DeploymentTrust trust = pki.trust();
    Credential c = pki.peer("acme", "a");
    X509Certificate[] chain = {c.certificate()};
    trust.verify(chain, CertificateUsage.TLS_CLIENT);
    pki.ca.revoke(c.certificate());
    assertEquals(
        KeyExchangeException.Reason.CERTIFICATE_REVOKED,
        refusal(trust, c.certificate(), CertificateUsage.TLS_CLIENT));
  }

  @Test
  void shouldFailClosedOnAForgedMissingOrExpiredCrl() throws Exception {
    X509Certificate c = pki.peer("acme", "a").certificate();
    Path crl = pki.dir.resolve(DeploymentCa.CRL);
    TestPki foreign = TestPki.create(tmp.resolve("foreign"));
    Files.copy(
        foreign.dir.resolve(DeploymentCa.CRL),
        crl,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertEquals(
        KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN,
        refusal(c, CertificateUsage.TLS_CLIENT));
    Files.write(crl, "garbage".getBytes(StandardCharsets.US_ASCII));
    assertEquals(
        KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN,
        refusal(c, CertificateUsage.TLS_CLIENT));
    Files.delete(crl);
    assertEquals(
        KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN,
        refusal(c, CertificateUsage.TLS_CLIENT));

    Instant twoYearsAgo = Instant.now().minus(Duration.ofDays(730));
    DeploymentCa old =
        DeploymentCa.init(tmp.resolve("old"), null, Clock.fixed(twoYearsAgo, ZoneOffset.UTC));
    X509Certificate fresh =
        old.issuePeer(
                PeerIdentity.of("acme", "a"),
                Instant.now().minusSeconds(60),
                Instant.now().plusSeconds(3600))
            .certificate();
    assertEquals(
        KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN,
        refusal(old.trust(), fresh, CertificateUsage.TLS_CLIENT));
  }
}
