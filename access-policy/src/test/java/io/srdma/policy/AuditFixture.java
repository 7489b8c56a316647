package io.srdma.policy;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A deployment CA with a host certificate (the checkpoint signer), a tenant certificate, a foreign
 * CA's host certificate, an audit key, and the tools of an attacker who can rewrite the log files.
 */
final class AuditFixture {
  static final String HOST_PREFIX = "srdma://host/";

  final Path dir;
  final DeploymentCa ca;
  final Credential host;
  final Credential tenant;
  final DeploymentCa foreignCa;
  final Credential foreignHost;
  final byte[] keyBytes = new byte[AuditKey.LENGTH];
  final AuditKey key;

  AuditFixture(Path dir) {
    this.dir = dir;
    ca = DeploymentCa.init(dir.resolve("ca"), null);
    host = ca.issuePeer(PeerIdentity.of("host", "h1"), Duration.ofDays(30));
    tenant = ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(30));
    foreignCa = DeploymentCa.init(dir.resolve("foreign-ca"), null);
    foreignHost = foreignCa.issuePeer(PeerIdentity.of("host", "h1"), Duration.ofDays(30));
    new java.security.SecureRandom().nextBytes(keyBytes);
    key = AuditKey.of(keyBytes);
  }

  AuditSigner signer() {
    return AuditSigner.of(host.certificate(), host.privateKey());
  }

  AuditCheckpointTrust trust() {
    return AuditCheckpointTrust.issuedBy(ca.certificate(), ca.crl(), HOST_PREFIX);
  }

  AuditVerifier verifier() {
    return new AuditVerifier(key, trust());
  }

  /** Options for a log keyed and signed, checkpoint every {@code every} lines, no timer. */
  AuditLogOptions options(Path file, int every) {
    return new AuditLogOptions(file)
        .key(key)
        .signer(signer())
        .checkpointLines(every)
        .checkpointInterval(Duration.ZERO)
        .clock(Clock.systemUTC());
  }

  /** Writes {@code n} events; returns the head after the last event (before close). */
  String write(Path file, int every, int n) {
    String head;
    try (AuditLog log = AuditLog.open(options(file, every))) {
      head = log.head();
      for (int i = 1; i <= n; i++) {
        head = log.append(AuditLogTest.event(i));
      }
    }
    return head;
  }

  /** HMAC-SHA256 of a text with raw key bytes, computed independently of the code under test. */
  static String hmac(byte[] key, String text) throws Exception {
    Mac m = Mac.getInstance("HmacSHA256");
    m.init(new SecretKeySpec(key, "HmacSHA256"));
    return HexFormat.of().formatHex(m.doFinal(text.getBytes(StandardCharsets.US_ASCII)));
  }

  /**
   * What an attacker who can write the files does after editing: rewrites every {@code prev} and
   * {@code mac} so that the chain links again, with {@code macKey} (null: SHA-256 of the line, the
   * old unkeyed chain).
   */
  static List<String> rechain(List<String> lines, int from, byte[] macKey) throws Exception {
    List<String> out = new ArrayList<>(lines.subList(0, from));
    String prev = from == 0 ? null : macOf(lines.get(from - 1));
    for (String l : lines.subList(from, lines.size())) {
      String body = l.substring(0, l.length() - AuditLine.MAC_SUFFIX);
      if (prev != null) {
        body = body.replaceFirst("\"prev\":\"[0-9a-f]{64}\"", "\"prev\":\"" + prev + "\"");
      }
      String mac =
          macKey == null
              ? HexFormat.of()
                  .formatHex(
                      MessageDigest.getInstance("SHA-256")
                          .digest(body.getBytes(StandardCharsets.US_ASCII)))
              : hmac(macKey, body);
      out.add(body + AuditLine.MAC_FIELD + mac + "\"}");
      prev = mac;
    }
    return out;
  }

  static String macOf(String line) {
    return line.substring(line.length() - AuditLine.MAC_SUFFIX + AuditLine.MAC_FIELD.length())
        .substring(0, 64);
  }

  /**
   * A checkpoint line signed again by {@code signer}'s key, with its certificate; MAC left stale.
   */
  static String resign(String checkpoint, Credential signer) throws Exception {
    return resign(checkpoint, signer.certificate(), signer.privateKey(), "SHA256withECDSA");
  }

  /** A checkpoint line signed again with any key and certificate; MAC left stale. */
  static String resign(
      String checkpoint,
      java.security.cert.X509Certificate cert,
      java.security.PrivateKey privateKey,
      String algorithm)
      throws Exception {
    String body = checkpoint.substring(0, checkpoint.indexOf(",\"cert\":\""));
    body += ",\"cert\":\"" + java.util.Base64.getEncoder().encodeToString(cert.getEncoded()) + "\"";
    java.security.Signature s = java.security.Signature.getInstance(algorithm);
    s.initSign(privateKey);
    s.update(body.getBytes(StandardCharsets.US_ASCII));
    return body
        + ",\"sig\":\""
        + java.util.Base64.getEncoder().encodeToString(s.sign())
        + "\""
        + AuditLine.MAC_FIELD
        + "0".repeat(64)
        + "\"}";
  }

  /** A self-signed certificate of an attacker's own making, valid from yesterday to tomorrow. */
  static java.security.cert.X509Certificate selfSigned(
      java.security.KeyPair kp, String subject, String algorithm) throws Exception {
    java.time.Instant now = java.time.Instant.now();
    org.bouncycastle.asn1.x500.X500Name name =
        new org.bouncycastle.asn1.x500.X500Name(
            new org.bouncycastle.asn1.x500.RDN[] {
              new org.bouncycastle.asn1.x500.RDN(
                  org.bouncycastle.asn1.x500.style.BCStyle.CN,
                  new org.bouncycastle.asn1.DERUTF8String(subject))
            });
    return new org.bouncycastle.cert.jcajce.JcaX509CertificateConverter()
        .getCertificate(
            new org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder(
                    name,
                    java.math.BigInteger.ONE,
                    java.util.Date.from(now.minus(Duration.ofDays(1))),
                    java.util.Date.from(now.plus(Duration.ofDays(1))),
                    name,
                    kp.getPublic())
                .build(
                    new org.bouncycastle.operator.jcajce.JcaContentSignerBuilder(algorithm)
                        .build(kp.getPrivate())));
  }

  static List<String> read(Path f) throws Exception {
    return new ArrayList<>(Files.readAllLines(f, StandardCharsets.US_ASCII));
  }

  static void write(Path f, List<String> lines) throws Exception {
    Files.write(f, lines, StandardCharsets.US_ASCII);
  }
}
