package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeploymentCaTest {
  @TempDir Path tmp;

  private static String perms(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  @Test
  void shouldCreateACaWithAnOwnerOnlyKeyAndAnEmptyCrl() throws Exception {
    Path dir = tmp.resolve("ca");
    DeploymentCa ca = DeploymentCa.init(dir, null);
    assertEquals("rw-------", perms(dir.resolve(DeploymentCa.CA_KEY)));
    assertEquals("rwx------", perms(dir));
    X509Certificate cert = ca.certificate();
    cert.verify(cert.getPublicKey());
    assertEquals(0, cert.getBasicConstraints());
    assertTrue(cert.getKeyUsage()[5] && cert.getKeyUsage()[6], "keyCertSign and cRLSign");
    assertEquals("EC", cert.getPublicKey().getAlgorithm());
    assertEquals("SHA256withECDSA", cert.getSigAlgName());
    assertEquals(null, ca.crl().getRevokedCertificates());
    ca.crl().verify(cert.getPublicKey());
  }

  @Test
  void shouldRefuseToInitOverAnExistingCa() {
    Path dir = tmp.resolve("ca");
    DeploymentCa.init(dir, null);
    byte[] before = SecureFilesBytes.read(dir.resolve(DeploymentCa.CA_KEY));
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.init(dir, null));
    assertEquals(KeyExchangeException.Reason.CA_EXISTS, e.reason());
    assertTrue(
        java.util.Arrays.equals(before, SecureFilesBytes.read(dir.resolve(DeploymentCa.CA_KEY))));
  }

  @Test
  void shouldSayWhenThereIsNoCa() {
    KeyExchangeException e =
        assertThrows(
            KeyExchangeException.class, () -> DeploymentCa.open(tmp.resolve("nothing"), null));
    assertEquals(KeyExchangeException.Reason.CA_NOT_FOUND, e.reason());
    assertTrue(e.getMessage().contains("nothing"), e.getMessage());
  }

  @Test
  void shouldIssueAPeerCertificateCarryingTheIdentity() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    Credential c = ca.issuePeer(PeerIdentity.of("acme", "kv-1"), Duration.ofDays(30));
    X509Certificate cert = c.certificate();
    cert.verify(ca.certificate().getPublicKey());
    assertEquals(PeerIdentity.of("acme", "kv-1"), PeerIdentity.fromCertificate(cert));
    assertEquals(-1, cert.getBasicConstraints());
    assertTrue(cert.getKeyUsage()[0], "digitalSignature");
    // a tenant peer only connects: clientAuth alone
    assertEquals(List.of("1.3.6.1.5.5.7.3.2"), cert.getExtendedKeyUsage());
    // a host only serves: serverAuth alone
    assertEquals(
        List.of("1.3.6.1.5.5.7.3.1"),
        ca.issueHost("h-1", Duration.ofDays(30)).certificate().getExtendedKeyUsage());
    assertTrue(ca.isIssued(cert.getSerialNumber()));
    assertTrue(cert.getSerialNumber().signum() > 0);
    assertTrue(cert.getSerialNumber().bitLength() <= 159);
    Credential other = ca.issuePeer(PeerIdentity.of("acme", "kv-1"), Duration.ofDays(30));
    assertNotEquals(cert.getSerialNumber(), other.certificate().getSerialNumber());
  }

  @Test
  void shouldWriteKeysOwnerOnlyAndNeverOverwrite() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    Credential c = ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1));
    Path crt = tmp.resolve("a.crt");
    Path key = tmp.resolve("a.key");
    c.writeTo(crt, key, null);
    assertEquals("rw-------", perms(key));
    Credential back = Credential.load(crt, key, null);
    assertEquals(c.certificate(), back.certificate());
    assertEquals(c.privateKey(), back.privateKey());
    Credential d = ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1));
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> d.writeTo(crt, tmp.resolve("b.key"), null));
    assertEquals(KeyExchangeException.Reason.FILE_EXISTS, e.reason());
    assertFalse(Files.exists(tmp.resolve("b.key")), "nothing written when one file exists");
    assertEquals(c.certificate(), Pem.readCertificate(crt));
  }

  @Test
  void shouldEncryptPrivateKeysWithAPassphrase() throws Exception {
    Path dir = tmp.resolve("ca");
    char[] pass = "correct horse".toCharArray();
    DeploymentCa.init(dir, pass);
    String pem =
        new String(Files.readAllBytes(dir.resolve(DeploymentCa.CA_KEY)), StandardCharsets.US_ASCII);
    assertTrue(pem.startsWith("-----BEGIN ENCRYPTED PRIVATE KEY-----"), pem);
    DeploymentCa ca = DeploymentCa.open(dir, pass);
    assertEquals(
        KeyExchangeException.Reason.BAD_PASSPHRASE,
        assertThrows(
                KeyExchangeException.class, () -> DeploymentCa.open(dir, "wrong".toCharArray()))
            .reason());
    assertEquals(
        KeyExchangeException.Reason.BAD_PASSPHRASE,
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.open(dir, null)).reason());
    assertTrue(ca.issuePeer(PeerIdentity.of("t", "p"), Duration.ofDays(1)) != null);
  }

  @Test
  void shouldRevokeIntoTheCrl() {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    Credential c = ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1));
    BigInteger serial = c.certificate().getSerialNumber();
    assertTrue(ca.revoke(serial));
    assertTrue(ca.crl().isRevoked(c.certificate()));
    assertFalse(ca.revoke(c.certificate()), "already revoked");
    Credential other = ca.issuePeer(PeerIdentity.of("acme", "b"), Duration.ofDays(1));
    assertFalse(ca.crl().isRevoked(other.certificate()));
    ca.revoke(other.certificate());
    assertTrue(ca.crl().isRevoked(c.certificate()) && ca.crl().isRevoked(other.certificate()));
  }

  @Test
  void shouldRefuseToRevokeWhatItNeverIssued() {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    DeploymentCa foreign = DeploymentCa.init(tmp.resolve("foreign"), null);
    Credential f = foreign.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1));
    assertEquals(
        KeyExchangeException.Reason.UNKNOWN_SERIAL,
        assertThrows(KeyExchangeException.class, () -> ca.revoke(BigInteger.valueOf(1234)))
            .reason());
    assertEquals(
        KeyExchangeException.Reason.UNTRUSTED_ISSUER,
        assertThrows(KeyExchangeException.class, () -> ca.revoke(f.certificate())).reason());
    assertEquals(
        KeyExchangeException.Reason.UNKNOWN_SERIAL,
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.parseSerial("xyz")).reason());
    assertEquals(BigInteger.valueOf(0xabcd), DeploymentCa.parseSerial("0xAB:CD"));
  }

  @Test
  void shouldIssueConsoleCertificatesForHostNames() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    X509Certificate cert = ca.issueServer("Console.Example.org", Duration.ofDays(1)).certificate();
    assertEquals(List.of("1.3.6.1.5.5.7.3.1"), cert.getExtendedKeyUsage());
    assertEquals(
        List.of(List.of(2, "console.example.org")), List.copyOf(cert.getSubjectAlternativeNames()));
    X509Certificate ip = ca.issueServer("10.0.0.7", Duration.ofDays(1)).certificate();
    assertEquals(7, ip.getSubjectAlternativeNames().iterator().next().get(0));
    for (String bad : new String[] {"", "-x.org", "a..b", "a_b.org", "999.1.1.1", "a b"}) {
      assertEquals(
          KeyExchangeException.Reason.BAD_NAME,
          assertThrows(KeyExchangeException.class, () -> ca.issueServer(bad, Duration.ofDays(1)))
              .reason(),
          bad);
    }
  }

  @Test
  void shouldIssueOneConsoleCertificateForLocalhostAndLoopback() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    X509Certificate cert =
        ca.issueServer(List.of("localhost", "127.0.0.1", "LOCALHOST"), Duration.ofDays(1))
            .certificate();
    assertEquals(
        List.of(List.of(2, "localhost"), List.of(7, "127.0.0.1")),
        List.copyOf(cert.getSubjectAlternativeNames()));
    assertEquals("CN=localhost", cert.getSubjectX500Principal().getName());
    assertEquals(List.of("1.3.6.1.5.5.7.3.1"), cert.getExtendedKeyUsage());
    assertTrue(ca.isIssued(cert.getSerialNumber()));
    assertEquals(
        KeyExchangeException.Reason.BAD_NAME,
        assertThrows(
                KeyExchangeException.class, () -> ca.issueServer(List.of(), Duration.ofDays(1)))
            .reason());
    assertEquals(
        KeyExchangeException.Reason.BAD_NAME,
        assertThrows(
                KeyExchangeException.class,
                () -> ca.issueServer(List.of("localhost", "a b"), Duration.ofDays(1)))
            .reason());
  }

  @Test
  void shouldIssueConsoleCertificatesForDnsNamesAndIpv4AndIpv6Addresses() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    X509Certificate cert =
        ca.issueServer(
                List.of("console.example.org", "Localhost", "10.0.0.7", "[::1]", "2001:DB8:0:0::1"),
                Duration.ofDays(1))
            .certificate();
    // type 2 = dNSName, 7 = iPAddress; the JDK prints IPv6 addresses in full
    assertEquals(
        List.of(
            List.of(2, "console.example.org"),
            List.of(2, "localhost"),
            List.of(7, "10.0.0.7"),
            List.of(7, "0:0:0:0:0:0:0:1"),
            List.of(7, "2001:db8:0:0:0:0:0:1")),
        List.copyOf(cert.getSubjectAlternativeNames()));
    assertEquals("CN=console.example.org", cert.getSubjectX500Principal().getName());
    // 16 octets for an IPv6 address, 4 for IPv4, straight from the extension
    org.bouncycastle.asn1.x509.GeneralNames names =
        org.bouncycastle.asn1.x509.GeneralNames.fromExtensions(
            new org.bouncycastle.cert.jcajce.JcaX509CertificateHolder(cert).getExtensions(),
            org.bouncycastle.asn1.x509.Extension.subjectAlternativeName);
    assertEquals(
        List.of(4, 16, 16),
        java.util.Arrays.stream(names.getNames())
            .filter(n -> n.getTagNo() == org.bouncycastle.asn1.x509.GeneralName.iPAddress)
            .map(
                n ->
                    org.bouncycastle.asn1.ASN1OctetString.getInstance(n.getName())
                        .getOctets()
                        .length)
            .toList());
  }

  @Test
  void shouldNormaliseAndCheckEachKindOfConsoleName() {
    assertEquals("::1", DeploymentCa.checkHost("0:0:0:0:0:0:0:1"));
    assertEquals("::1", DeploymentCa.checkIpAddress("[::1]"));
    assertEquals("2001:db8::1:0:0:1", DeploymentCa.checkIpAddress("2001:DB8:0:0:1:0:0:1"));
    assertEquals("1::", DeploymentCa.checkIpAddress("1:0:0:0:0:0:0:0"));
    assertEquals("1:0:2::", DeploymentCa.checkIpAddress("1:0:2:0:0:0:0:0"));
    assertEquals("fe80::", DeploymentCa.checkIpAddress("fe80::"));
    assertEquals("192.168.1.10", DeploymentCa.checkIpAddress("192.168.1.10"));
    assertEquals("example.org", DeploymentCa.checkDnsName("Example.ORG"));
    assertTrue(DeploymentCa.isIpAddress("::1"));
    assertTrue(DeploymentCa.isIpAddress("10.0.0.1"));
    assertTrue(!DeploymentCa.isIpAddress("example.org"));
    for (String bad :
        new String[] {
          "::",
          "0.0.0.0",
          "1::2::3",
          "fe80::1%eth0",
          "::1/64",
          "12345::1",
          "g::1",
          "[]",
          "[example.org]",
          "010.0.0.1",
          "256.1.1.1",
          "1.2.3.4.5:80"
        }) {
      KeyExchangeException e =
          assertThrows(KeyExchangeException.class, () -> DeploymentCa.checkHost(bad), bad);
      assertEquals(KeyExchangeException.Reason.BAD_NAME, e.reason(), bad);
      assertTrue(e.getMessage().contains("(got "), e.getMessage());
    }
    assertTrue(
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.checkDnsName("::1"))
            .getMessage()
            .contains("is an IP address, not a DNS name"));
    assertTrue(
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.checkDnsName("10.0.0.1"))
            .getMessage()
            .contains("is an IP address, not a DNS name"));
    assertTrue(
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.checkIpAddress("example.org"))
            .getMessage()
            .contains("not an IPv4 or IPv6 address: \"example.org\""));
  }

  /** Reads files without going through the code under test. */
  private static final class SecureFilesBytes {
    static byte[] read(Path p) {
      try {
        return Files.readAllBytes(p);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }
}
