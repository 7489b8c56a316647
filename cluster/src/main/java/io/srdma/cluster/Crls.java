package io.srdma.cluster;

import io.srdma.keys.Pem;
import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.cert.CRLException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509CRL;
import org.bouncycastle.asn1.ASN1Integer;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.x509.Extension;

/** CRLs as etcd holds them: PEM text. */
final class Crls {
  private Crls() {}

  static byte[] encode(X509CRL crl) {
    return Pem.toPem(crl).getBytes(StandardCharsets.US_ASCII);
  }

  static X509CRL decode(byte[] pem) {
    try {
      return (X509CRL)
          CertificateFactory.getInstance("X.509").generateCRL(new ByteArrayInputStream(pem));
    } catch (CertificateException | CRLException | ClassCastException e) {
      throw new ClusterException(
          ClusterException.Reason.MALFORMED, "etcd holds a malformed revocation list", e);
    }
  }

  /** The cRLNumber, or -1 if absent or malformed. */
  static BigInteger number(X509CRL crl) {
    byte[] ext = crl.getExtensionValue(Extension.cRLNumber.getId());
    if (ext == null) {
      return BigInteger.ONE.negate();
    }
    try {
      return ASN1Integer.getInstance(ASN1OctetString.getInstance(ext).getOctets()).getValue();
    } catch (IllegalArgumentException e) {
      return BigInteger.ONE.negate();
    }
  }
}
