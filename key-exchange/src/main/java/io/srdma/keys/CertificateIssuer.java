package io.srdma.keys;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Date;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.CRLNumber;
import org.bouncycastle.asn1.x509.CRLReason;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v2CRLBuilder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CRLConverter;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v2CRLBuilder;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.IPAddress;

/**
 * The certificate profiles of a deployment (see docs/keys.md): ECDSA P-256 keys, SHA-256 ECDSA
 * signatures, random 127-bit serial numbers.
 */
final class CertificateIssuer {
  static final String SIGNATURE_ALGORITHM = "SHA256withECDSA";
  private static final Pattern HOST_LABEL = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?");
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  private final SecureRandom random;

  CertificateIssuer(SecureRandom random) {
    this.random = random;
  }

  /** A fresh P-256 key pair. */
  KeyPair newKeyPair() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"), random);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw Pem.internal("P-256 key generation unavailable", e);
    }
  }

  /** A positive serial number of 127 random bits (RFC 5280 §4.1.2.2: at most 20 octets). */
  BigInteger newSerial() {
    return new BigInteger(127, random).setBit(126);
  }

  X509Certificate selfSignedCa(KeyPair keys, String commonName, Instant from, Instant to) {
    X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
    return selfSignedCa(keys, name, from, to);
  }

  /**
   * The CA certificate {@code old} again over the same key pair and the same subject (its exact
   * encoding, so issuer names of the certificates it issued still chain), with a new serial and the
   * validity {@code [from, to]}.
   */
  X509Certificate renewedCa(X509Certificate old, PrivateKey key, Instant from, Instant to) {
    X500Name name = X500Name.getInstance(old.getSubjectX500Principal().getEncoded());
    return selfSignedCa(new KeyPair(old.getPublicKey(), key), name, from, to);
  }

  private X509Certificate selfSignedCa(KeyPair keys, X500Name name, Instant from, Instant to) {
    try {
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
                  name, newSerial(), Date.from(from), Date.from(to), name, keys.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
              .addExtension(
                  Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  ext.createSubjectKeyIdentifier(keys.getPublic()));
      return sign(b, keys.getPrivate());
    } catch (CertIOException | GeneralSecurityException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "cannot build CA certificate", e);
    }
  }

  X509Certificate peer(
      X509Certificate ca,
      PrivateKey caKey,
      PublicKey subjectKey,
      PeerIdentity identity,
      Instant from,
      Instant to) {
    X500Name subject =
        new X500NameBuilder(BCStyle.INSTANCE)
            .addRDN(BCStyle.O, identity.tenant())
            .addRDN(BCStyle.CN, identity.peer())
            .build();
    GeneralNames san =
        new GeneralNames(new GeneralName(GeneralName.uniformResourceIdentifier, identity.toUri()));
    // one role per certificate: a host only serves, a tenant peer only connects, so neither can
    // stand in for the other (both ends check it, DeploymentTrust.checkUsage)
    ExtendedKeyUsage eku =
        new ExtendedKeyUsage(
            identity.isHost() ? KeyPurposeId.id_kp_serverAuth : KeyPurposeId.id_kp_clientAuth);
    return leaf(ca, caKey, subjectKey, subject, san, eku, from, to);
  }

  X509Certificate server(
      X509Certificate ca,
      PrivateKey caKey,
      PublicKey subjectKey,
      String host,
      Instant from,
      Instant to) {
    return server(ca, caKey, subjectKey, java.util.List.of(host), from, to);
  }

  /** A server certificate for several checked hosts: CN the first, one SAN entry each. */
  X509Certificate server(
      X509Certificate ca,
      PrivateKey caKey,
      PublicKey subjectKey,
      java.util.List<String> hosts,
      Instant from,
      Instant to) {
    X500Name subject =
        new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, hosts.get(0)).build();
    GeneralName[] names = new GeneralName[hosts.size()];
    for (int i = 0; i < names.length; i++) {
      String host = hosts.get(i);
      // iPAddress (4 or 16 octets) for an address, dNSName for a name: clients match an address
      // they connect to only against iPAddress entries (RFC 6125 section 6.2.1, RFC 9525)
      names[i] =
          isIpAddress(host)
              ? new GeneralName(GeneralName.iPAddress, host)
              : new GeneralName(GeneralName.dNSName, host);
    }
    ExtendedKeyUsage eku = new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth);
    return leaf(ca, caKey, subjectKey, subject, new GeneralNames(names), eku, from, to);
  }

  private X509Certificate leaf(
      X509Certificate ca,
      PrivateKey caKey,
      PublicKey subjectKey,
      X500Name subject,
      GeneralNames san,
      ExtendedKeyUsage eku,
      Instant from,
      Instant to) {
    if (!from.isBefore(to)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT, "validity must end after it starts");
    }
    try {
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
                  ca, newSerial(), Date.from(from), Date.from(to), subject, subjectKey)
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
              .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
              .addExtension(Extension.extendedKeyUsage, false, eku)
              .addExtension(Extension.subjectAlternativeName, false, san)
              .addExtension(
                  Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(subjectKey))
              .addExtension(
                  // the key identifier only, not the CA certificate's issuer and serial: a CA
                  // renewed over the same key (DeploymentCa.renew) has a new serial, and PKIX
                  // (the JDK's, OpenSSL's) then refuses a v3 certificate whose identifier names
                  // the old one (RFC 5280 4.2.1.1; CA/Browser Forum BR 7.1.2.11.1 alike)
                  Extension.authorityKeyIdentifier,
                  false,
                  ext.createAuthorityKeyIdentifier(ca.getPublicKey()));
      return sign(b, caKey);
    } catch (CertIOException | GeneralSecurityException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "cannot build certificate", e);
    }
  }

  X509CRL crl(
      X509Certificate ca,
      PrivateKey caKey,
      Map<BigInteger, Instant> revoked,
      BigInteger number,
      Instant thisUpdate,
      Instant nextUpdate) {
    try {
      X509v2CRLBuilder b = new JcaX509v2CRLBuilder(ca, Date.from(thisUpdate));
      b.setNextUpdate(Date.from(nextUpdate));
      for (Map.Entry<BigInteger, Instant> e : revoked.entrySet()) {
        b.addCRLEntry(e.getKey(), Date.from(e.getValue()), CRLReason.unspecified);
      }
      b.addExtension(Extension.cRLNumber, false, new CRLNumber(number));
      b.addExtension(
          Extension.authorityKeyIdentifier,
          false,
          new JcaX509ExtensionUtils().createAuthorityKeyIdentifier(ca.getPublicKey()));
      return new JcaX509CRLConverter().getCRL(b.build(signer(caKey)));
    } catch (CertIOException | GeneralSecurityException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "cannot build CRL", e);
    }
  }

  /**
   * Checks and normalises a console host: a DNS name (labels of a-z, 0-9, '-', lower-cased), an
   * IPv4 address (dotted decimal, no leading zeros) or an IPv6 address (optionally in brackets,
   * written back in the RFC 5952 form, e.g. {@code ::1}).
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if malformed
   */
  static String checkHost(String host) {
    if (host == null || host.isEmpty() || host.length() > 253) {
      throw badHost(host, null);
    }
    String h = host.toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]") && h.length() > 2) {
      return checkIpv6(host, h.substring(1, h.length() - 1));
    }
    if (h.indexOf(':') >= 0) {
      return checkIpv6(host, h);
    }
    if (IPV4.matcher(h).matches()) {
      for (String part : h.split("\\.", -1)) {
        if (Integer.parseInt(part) > 255) {
          throw badHost(host, "an IPv4 address has four numbers 0 to 255");
        }
        if (part.length() > 1 && part.charAt(0) == '0') {
          throw badHost(host, "an IPv4 address has no leading zeros (some read them as octal)");
        }
      }
      if (h.equals("0.0.0.0")) {
        throw badHost(host, "0.0.0.0 is no address a client connects to");
      }
      return h;
    }
    for (String label : h.split("\\.", -1)) {
      if (!HOST_LABEL.matcher(label).matches()) {
        throw badHost(host, null);
      }
    }
    return h;
  }

  /** Checks a DNS name: as {@link #checkHost} but refusing addresses. */
  static String checkDnsName(String name) {
    String h = checkHost(name);
    if (isIpAddress(h)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_NAME,
          PeerIdentity.printable(name) + " is an IP address, not a DNS name");
    }
    return h;
  }

  /** Checks an IPv4 or IPv6 address: as {@link #checkHost} but refusing DNS names. */
  static String checkIpAddress(String address) {
    if (address != null && !address.isEmpty() && address.length() <= 253) {
      String h = address.toLowerCase(Locale.ROOT);
      if (h.indexOf(':') < 0 && !IPV4.matcher(h).matches()) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_NAME,
            "not an IPv4 or IPv6 address: " + PeerIdentity.printable(address));
      }
    }
    return checkHost(address);
  }

  /** Whether a checked host is an address (IPv4 or IPv6) rather than a DNS name. */
  static boolean isIpAddress(String checkedHost) {
    return checkedHost.indexOf(':') >= 0 || IPV4.matcher(checkedHost).matches();
  }

  private static String checkIpv6(String original, String address) {
    // BouncyCastle's check: eight groups or '::', an IPv4 tail allowed; no zone (%eth0), no prefix
    if (!IPAddress.isValidIPv6(address)) {
      throw badHost(
          original, "an IPv6 address is up to eight groups of hex digits with one '::', no zone");
    }
    byte[] bytes =
        ASN1OctetString.getInstance(new GeneralName(GeneralName.iPAddress, address).getName())
            .getOctets();
    String text = rfc5952(bytes);
    if (text.equals("::")) {
      throw badHost(original, ":: is no address a client connects to");
    }
    return text;
  }

  /** The RFC 5952 text of a 16-byte address: lower-case, longest run of zero groups as '::'. */
  private static String rfc5952(byte[] address) {
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = ((address[2 * i] & 0xff) << 8) | (address[2 * i + 1] & 0xff);
    }
    int bestStart = -1;
    int bestLength = 1; // a single zero group is not shortened
    for (int i = 0; i < 8; ) {
      if (groups[i] != 0) {
        i++;
        continue;
      }
      int j = i;
      while (j < 8 && groups[j] == 0) {
        j++;
      }
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j;
    }
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        b.append("::");
        i += bestLength - 1;
        continue;
      }
      if (b.length() > 0 && b.charAt(b.length() - 1) != ':') {
        b.append(':');
      }
      b.append(Integer.toHexString(groups[i]));
    }
    return b.toString();
  }

  private static KeyExchangeException badHost(String host, String why) {
    return new KeyExchangeException(
        KeyExchangeException.Reason.BAD_NAME,
        (why != null
                ? why
                : "host must be a DNS name (labels of a-z, 0-9, '-'), an IPv4 or an IPv6 address")
            + (host == null ? "" : " (got " + PeerIdentity.printable(host) + ")"));
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey key)
      throws GeneralSecurityException {
    return new JcaX509CertificateConverter().getCertificate(b.build(signer(key)));
  }

  private static ContentSigner signer(PrivateKey key) throws GeneralSecurityException {
    try {
      return new JcaContentSignerBuilder(SIGNATURE_ALGORITHM).build(key);
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("signer unavailable", e);
    }
  }
}
