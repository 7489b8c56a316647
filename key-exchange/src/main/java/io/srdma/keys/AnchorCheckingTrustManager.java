package io.srdma.keys;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The JDK's PKIX trust manager with one anchor, refusing while that anchor is outside its validity
 * period ({@link TrustAnchorValidity}), which PKIX itself ignores. Everything else (path, dates of
 * the peer's certificate, host name checks the engine asks for) is the JDK's. A refusal is a {@link
 * CertificateException} whose cause is the typed {@link KeyExchangeException}. Thread-safe.
 */
final class AnchorCheckingTrustManager extends X509ExtendedTrustManager {
  private final TrustAnchorValidity anchor;
  private final X509ExtendedTrustManager pkix;

  AnchorCheckingTrustManager(TrustAnchorValidity anchor) {
    this.anchor = anchor;
    this.pkix = pkix(anchor.certificate());
  }

  private static X509ExtendedTrustManager pkix(X509Certificate ca) {
    try {
      KeyStore anchors = KeyStore.getInstance(KeyStore.getDefaultType());
      anchors.load(null, null);
      anchors.setCertificateEntry("ca", ca);
      TrustManagerFactory f = TrustManagerFactory.getInstance("PKIX");
      f.init(anchors);
      for (TrustManager tm : f.getTrustManagers()) {
        if (tm instanceof X509ExtendedTrustManager x) {
          return x;
        }
      }
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "the JDK's PKIX gave no X.509 trust manager");
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "cannot build a PKIX trust manager", e);
    }
  }

  private void checkAnchor() throws CertificateException {
    try {
      anchor.check();
    } catch (KeyExchangeException e) {
      throw new CertificateException(e.getMessage(), e);
    }
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    checkAnchor();
    pkix.checkClientTrusted(chain, authType);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    checkAnchor();
    pkix.checkServerTrusted(chain, authType);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    checkAnchor();
    pkix.checkClientTrusted(chain, authType, socket);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    checkAnchor();
    pkix.checkServerTrusted(chain, authType, socket);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    checkAnchor();
    pkix.checkClientTrusted(chain, authType, engine);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    checkAnchor();
    pkix.checkServerTrusted(chain, authType, engine);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return pkix.getAcceptedIssuers();
  }
}
