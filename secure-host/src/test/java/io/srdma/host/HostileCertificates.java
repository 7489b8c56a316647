package io.srdma.host;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509TrustManager;
import javax.security.auth.x500.X500Principal;

/**
 * Certificates hostile to parse, written byte by byte (DER, with the nesting and sizes an attacker
 * picks), signed by the attacker's own key, and a TLS 1.3 client that presents them as they are:
 * the JDK's client never parses them, so what it sends is exactly these bytes.
 */
final class HostileCertificates {
  static final String ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";

  /** The attacker's key: its public half is in every certificate, it signs CertificateVerify. */
  final KeyPair key;

  HostileCertificates() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    key = g.generateKeyPair();
  }

  /** One DER element. */
  static byte[] tlv(int tag, byte[] value) {
    ByteArrayOutputStream o = new ByteArrayOutputStream(value.length + 6);
    o.write(tag);
    int n = value.length;
    if (n < 0x80) {
      o.write(n);
    } else if (n < 0x100) {
      o.write(0x81);
      o.write(n);
    } else if (n < 0x10000) {
      o.write(0x82);
      o.write(n >> 8);
      o.write(n);
    } else {
      o.write(0x83);
      o.write(n >> 16);
      o.write(n >> 8);
      o.write(n);
    }
    o.writeBytes(value);
    return o.toByteArray();
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      o.writeBytes(p);
    }
    return o.toByteArray();
  }

  static byte[] oid(String dotted) {
    String[] arcs = dotted.split("\\.");
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    o.write(Integer.parseInt(arcs[0]) * 40 + Integer.parseInt(arcs[1]));
    for (int i = 2; i < arcs.length; i++) {
      long v = Long.parseLong(arcs[i]);
      byte[] tmp = new byte[10];
      int k = tmp.length;
      tmp[--k] = (byte) (v & 0x7f);
      while ((v >>>= 7) != 0) {
        tmp[--k] = (byte) (0x80 | (v & 0x7f));
      }
      o.write(tmp, k, tmp.length - k);
    }
    return tlv(0x06, o.toByteArray());
  }

  /** {@code inner} wrapped {@code depth} times in constructed elements of {@code tag}. */
  static byte[] nested(int tag, byte[] inner, int depth) {
    byte[] cur = inner;
    for (int i = 0; i < depth; i++) {
      cur = tlv(tag, cur);
    }
    return cur;
  }

  /** A Name of one CN (a UTF8String). */
  static byte[] name(String cn) {
    return name(tlv(0x0c, cn.getBytes(StandardCharsets.UTF_8)));
  }

  /** A Name of one CN whose value is the encoded {@code value}, whatever it is. */
  static byte[] name(byte[] value) {
    return tlv(0x30, tlv(0x31, tlv(0x30, concat(oid("2.5.4.3"), value))));
  }

  /**
   * An extension: its OID and its extnValue element exactly as given (normally an OCTET STRING).
   */
  static byte[] extension(String oid, byte[] extnValueElement) {
    return tlv(0x30, concat(oid(oid), extnValueElement));
  }

  /** An extension whose OCTET STRING holds {@code content}. */
  static byte[] extensionWith(String oid, byte[] content) {
    return extension(oid, tlv(0x04, content));
  }

  /** A v3 certificate with these names and extensions, signed by {@link #key}. */
  byte[] certificate(byte[] issuer, byte[] subject, List<byte[]> extensions)
      throws GeneralSecurityException {
    byte[] algorithm = tlv(0x30, oid(ECDSA_WITH_SHA256));
    long now = System.currentTimeMillis();
    byte[] validity =
        tlv(
            0x30,
            concat(tlv(0x17, utcTime(now - 3_600_000L)), tlv(0x17, utcTime(now + 86_400_000L))));
    byte[] exts =
        extensions.isEmpty()
            ? new byte[0]
            : tlv(0xa3, tlv(0x30, concat(extensions.toArray(new byte[0][]))));
    byte[] tbs =
        tlv(
            0x30,
            concat(
                tlv(0xa0, tlv(0x02, new byte[] {2})),
                tlv(0x02, BigInteger.valueOf(now).toByteArray()),
                algorithm,
                issuer,
                validity,
                subject,
                key.getPublic().getEncoded(),
                exts));
    Signature s = Signature.getInstance("SHA256withECDSA");
    s.initSign(key.getPrivate());
    s.update(tbs);
    byte[] sig = s.sign();
    return tlv(0x30, concat(tbs, algorithm, tlv(0x03, concat(new byte[] {0}, sig))));
  }

  private static byte[] utcTime(long millis) {
    java.time.format.DateTimeFormatter f =
        java.time.format.DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'")
            .withZone(java.time.ZoneOffset.UTC);
    return f.format(java.time.Instant.ofEpochMilli(millis)).getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * Runs a TLS 1.3 handshake from {@code from} to {@code host} presenting {@code chain} (encoded
   * certificates, sent as they are), then reads until the host closes.
   *
   * @return what ended the connection, for the test's message
   */
  String present(InetAddress from, InetSocketAddress host, List<byte[]> chain, int timeoutMillis)
      throws Exception {
    X509Certificate[] certs = new X509Certificate[chain.size()];
    for (int i = 0; i < certs.length; i++) {
      certs[i] = new RawCertificate(chain.get(i), key.getPublic());
    }
    SSLContext ctx = SSLContext.getInstance("TLSv1.3");
    ctx.init(
        new javax.net.ssl.KeyManager[] {new FixedKeyManager(certs, key.getPrivate())},
        new TrustManager[] {new TrustAll()},
        null);
    try (Socket plain = new Socket()) {
      plain.bind(new InetSocketAddress(from, 0));
      plain.connect(host, timeoutMillis);
      SSLSocket s =
          (SSLSocket)
              ctx.getSocketFactory()
                  .createSocket(plain, host.getHostString(), host.getPort(), true);
      s.setEnabledProtocols(new String[] {"TLSv1.3"});
      s.setSoTimeout(timeoutMillis);
      try {
        s.startHandshake(); // TLS 1.3: the client is done before the host judges its certificate
        while (s.getInputStream().read() >= 0) {
          // nothing comes before the host's refusal
        }
        return "closed";
      } catch (java.net.SocketTimeoutException e) {
        return "timeout";
      } catch (IOException e) {
        return e.toString();
      }
    }
  }

  /** Presents a fixed chain and key, whatever the host asks for. */
  private static final class FixedKeyManager extends X509ExtendedKeyManager {
    private final X509Certificate[] chain;
    private final PrivateKey privateKey;

    FixedKeyManager(X509Certificate[] chain, PrivateKey privateKey) {
      this.chain = chain;
      this.privateKey = privateKey;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return new String[] {"evil"};
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return "evil";
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine e) {
      return "evil";
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return chain.clone();
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return privateKey;
    }
  }

  private static final class TrustAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  /** Encoded bytes the JDK's client sends without parsing them; only the key is real. */
  private static final class RawCertificate extends X509Certificate {
    private static final long serialVersionUID = 1L;
    private final byte[] encoded;
    private final transient PublicKey publicKey;

    RawCertificate(byte[] encoded, PublicKey publicKey) {
      this.encoded = encoded.clone();
      this.publicKey = publicKey;
    }

    @Override
    public byte[] getEncoded() {
      return encoded.clone();
    }

    @Override
    public PublicKey getPublicKey() {
      return publicKey;
    }

    @Override
    public void verify(PublicKey key) {}

    @Override
    public void verify(PublicKey key, String sigProvider) {}

    @Override
    public String toString() {
      return "RawCertificate[" + encoded.length + " bytes]";
    }

    @Override
    public void checkValidity() {}

    @Override
    public void checkValidity(Date date) {}

    @Override
    public int getVersion() {
      return 3;
    }

    @Override
    public BigInteger getSerialNumber() {
      return BigInteger.ONE;
    }

    @Override
    public Principal getIssuerDN() {
      return getIssuerX500Principal();
    }

    @Override
    public X500Principal getIssuerX500Principal() {
      return new X500Principal("CN=evil");
    }

    @Override
    public Principal getSubjectDN() {
      return getSubjectX500Principal();
    }

    @Override
    public X500Principal getSubjectX500Principal() {
      return new X500Principal("CN=evil");
    }

    @Override
    public Date getNotBefore() {
      return new Date(0);
    }

    @Override
    public Date getNotAfter() {
      return new Date(Long.MAX_VALUE / 2);
    }

    @Override
    public byte[] getTBSCertificate() {
      return encoded.clone();
    }

    @Override
    public byte[] getSignature() {
      return new byte[0];
    }

    @Override
    public String getSigAlgName() {
      return "SHA256withECDSA";
    }

    @Override
    public String getSigAlgOID() {
      return ECDSA_WITH_SHA256;
    }

    @Override
    public byte[] getSigAlgParams() {
      return null;
    }

    @Override
    public boolean[] getIssuerUniqueID() {
      return null;
    }

    @Override
    public boolean[] getSubjectUniqueID() {
      return null;
    }

    @Override
    public boolean[] getKeyUsage() {
      return null;
    }

    @Override
    public int getBasicConstraints() {
      return -1;
    }

    @Override
    public boolean hasUnsupportedCriticalExtension() {
      return false;
    }

    @Override
    public Set<String> getCriticalExtensionOIDs() {
      return Set.of();
    }

    @Override
    public Set<String> getNonCriticalExtensionOIDs() {
      return Set.of();
    }

    @Override
    public byte[] getExtensionValue(String oid) {
      return null;
    }
  }

  /** Many copies of one certificate: a chain far longer than any peer needs. */
  static List<byte[]> repeated(byte[] certificate, int n) {
    List<byte[]> chain = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      chain.add(certificate);
    }
    return chain;
  }
}
