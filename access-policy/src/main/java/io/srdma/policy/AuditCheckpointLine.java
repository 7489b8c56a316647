package io.srdma.policy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Set;
import java.util.regex.Matcher;

/** The check of one checkpoint line, for {@link AuditVerifier}. Stateless. */
final class AuditCheckpointLine {
  private AuditCheckpointLine() {}

  /**
   * Checks one checkpoint line: its {@code from} and {@code lines_sha256} against the lines since
   * the previous checkpoint or genesis, its signature against the certificate it carries, and, with
   * a trust, that certificate as a host's of the deployment at the checkpoint's time.
   *
   * @param raw the line as read
   * @param l the line parsed
   * @param cover the running SHA-256 of the lines it should cover (consumed)
   * @param coverFrom the seq the previous checkpoint or the genesis leaves it to cover from
   * @param cf an X.509 certificate factory
   * @param trust who may sign checkpoints, or null not to check the signer against a CA
   * @param signers where the signer's name is added (escaped: it reaches terminals)
   * @return the problem, or null if the checkpoint holds
   */
  static String problem(
      String raw,
      AuditLine l,
      MessageDigest cover,
      long coverFrom,
      CertificateFactory cf,
      AuditCheckpointTrust trust,
      Set<String> signers) {
    Matcher m = AuditLine.CHECKPOINT.matcher(raw);
    if (!m.matches()) {
      return "malformed checkpoint line";
    }
    long from = Long.parseLong(m.group(2));
    if (from != coverFrom) {
      return "checkpoint covers from seq "
          + from
          + " but the previous checkpoint or genesis is seq "
          + coverFrom;
    }
    String digest = HexFormat.of().formatHex(cover.digest());
    if (!digest.equals(m.group(3))) {
      return "lines seq "
          + from
          + ".."
          + (l.seq - 1)
          + " do not match checkpoint seq "
          + l.seq
          + ": one of them was edited, deleted, inserted or reordered";
    }
    X509Certificate cert;
    byte[] sig;
    try {
      cert =
          (X509Certificate)
              cf.generateCertificate(
                  new ByteArrayInputStream(Base64.getDecoder().decode(m.group(4))));
      sig = Base64.getDecoder().decode(m.group(6));
    } catch (CertificateException | IllegalArgumentException | ClassCastException e) {
      return "checkpoint certificate or signature unreadable";
    }
    try {
      AuditSigner.algorithm(cert.getPublicKey());
    } catch (AuditException e) {
      return "checkpoint certificate has a key no host signs checkpoints with: " + e.getMessage();
    }
    byte[] signed = raw.substring(0, m.start(5)).getBytes(StandardCharsets.ISO_8859_1);
    if (!AuditSigner.verify(cert.getPublicKey(), signed, sig)) {
      return "checkpoint signature does not verify: the checkpoint was forged or edited";
    }
    if (trust != null) {
      Instant at;
      try {
        at = Instant.parse(l.time);
      } catch (DateTimeParseException e) {
        return "checkpoint time unreadable: " + l.time;
      }
      String refusal = trust.refusal(cert, at);
      if (refusal != null) {
        return "checkpoint signer not trusted: " + Printable.escape(refusal);
      }
    }
    String id = AuditCheckpointTrust.identity(cert);
    // the name is the certificate's, which anyone can make: it reaches terminals
    signers.add(Printable.escape(id != null ? id : cert.getSubjectX500Principal().getName()));
    return null;
  }
}
