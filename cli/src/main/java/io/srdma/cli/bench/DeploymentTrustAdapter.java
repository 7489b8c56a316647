package io.srdma.cli.bench;

import io.srdma.keys.CertificateUsage;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * {@link DeploymentTrust} as a JSSE trust manager for TLS stacks other than {@code MutualTls}
 * (Netty on BoringSSL): the same CA-only validation, revocation, usage and identity checks.
 */
final class DeploymentTrustAdapter extends X509ExtendedTrustManager {
  private final DeploymentTrust trust;

  DeploymentTrustAdapter(DeploymentTrust trust) {
    this.trust = trust;
  }

  private void check(X509Certificate[] chain, CertificateUsage usage) throws CertificateException {
    try {
      trust.verify(chain, usage);
    } catch (KeyExchangeException e) {
      throw new CertificateException(e.getMessage(), e);
    }
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_CLIENT);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_SERVER);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_CLIENT);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_SERVER);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_CLIENT);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_SERVER);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return new X509Certificate[] {trust.caCertificate()};
  }
}
