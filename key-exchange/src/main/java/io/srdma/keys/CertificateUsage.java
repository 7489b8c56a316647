package io.srdma.keys;

/** What a peer's certificate is being checked for: the TLS role the peer plays. */
public enum CertificateUsage {
  /** The peer is the TLS client: its certificate needs extended key usage clientAuth. */
  TLS_CLIENT("1.3.6.1.5.5.7.3.2"),
  /** The peer is the TLS server: its certificate needs extended key usage serverAuth. */
  TLS_SERVER("1.3.6.1.5.5.7.3.1");

  private final String extendedKeyUsageOid;

  CertificateUsage(String extendedKeyUsageOid) {
    this.extendedKeyUsageOid = extendedKeyUsageOid;
  }

  /** The OID of the extended key usage the certificate must carry. */
  public String extendedKeyUsageOid() {
    return extendedKeyUsageOid;
  }
}
