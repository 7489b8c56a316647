package io.srdma.cli;

import io.srdma.keys.CertificateUsage;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * A TLS 1.3 client that presents a certificate the deployment did not issue while it still checks
 * the host's certificate against the deployment: whatever refuses the connection then is the host.
 * ({@link MutualTls} cannot play this part: it sends the deployment CA along as the chain.)
 */
final class ForeignPeer {
  private ForeignPeer() {}

  /** Where a failed connection failed. */
  enum Refusal {
    /** The host refused (alert or close after the handshake started). */
    BY_HOST,
    /** This side refused the host's certificate: the host was never tested. */
    BY_US,
    /** No TCP connection. */
    NO_CONNECTION
  }

  /**
   * Connects presenting {@code forged} (null: no certificate at all) and reads; returns who
   * refused, or null when the host sent application data or kept the connection open for {@code
   * timeout} (it accepted the certificate).
   */
  static Refusal attempt(
      InetSocketAddress address, Credential forged, DeploymentTrust trust, Duration timeout)
      throws GeneralSecurityException {
    SSLContext ctx = context(forged, trust);
    int ms = (int) timeout.toMillis();
    Socket raw = new Socket();
    try {
      raw.connect(address, ms);
    } catch (IOException e) {
      closeQuietly(raw);
      return Refusal.NO_CONNECTION;
    }
    try (SSLSocket s =
        (SSLSocket)
            ctx.getSocketFactory()
                .createSocket(raw, address.getHostString(), address.getPort(), true)) {
      s.setUseClientMode(true);
      s.setEnabledProtocols(new String[] {MutualTls.PROTOCOL});
      s.setSoTimeout(ms);
      try {
        s.startHandshake();
      } catch (IOException e) {
        return refusedByUs(e) ? Refusal.BY_US : Refusal.BY_HOST;
      }
      // TLS 1.3: the client finishes before the host has judged its certificate; the refusal
      // arrives as an alert or a close on the first read. A host that accepted the certificate
      // answers the bytes below with an ERROR frame: any byte read means it accepted.
      try {
        s.getOutputStream()
            .write("GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s.getInputStream().read() < 0 ? Refusal.BY_HOST : null;
      } catch (java.net.SocketTimeoutException e) {
        return null;
      } catch (IOException e) {
        return Refusal.BY_HOST;
      }
    } catch (IOException e) {
      return Refusal.BY_HOST;
    }
  }

  private static boolean refusedByUs(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof KeyExchangeException || t instanceof ForeignCertificateRefused) {
        return true;
      }
    }
    return false;
  }

  private static SSLContext context(Credential forged, DeploymentTrust trust)
      throws GeneralSecurityException {
    if (forged == null) {
      // no key manager: the client sends an empty Certificate message
      SSLContext none = SSLContext.getInstance(MutualTls.PROTOCOL);
      none.init(null, new TrustManager[] {new HostCheck(trust)}, new SecureRandom());
      return none;
    }
    char[] none = new char[0];
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try {
      ks.load(null, null);
    } catch (IOException e) {
      throw new GeneralSecurityException("empty key store", e);
    }
    ks.setKeyEntry("forged", forged.privateKey(), none, new Certificate[] {forged.certificate()});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
    kmf.init(ks, none);
    SSLContext ctx = SSLContext.getInstance(MutualTls.PROTOCOL);
    ctx.init(kmf.getKeyManagers(), new TrustManager[] {new HostCheck(trust)}, new SecureRandom());
    return ctx;
  }

  /** This side's refusal of the host's certificate. */
  private static final class ForeignCertificateRefused extends CertificateException {
    private static final long serialVersionUID = 1L;

    ForeignCertificateRefused(KeyExchangeException cause) {
      super(cause.getMessage(), cause);
    }
  }

  private record HostCheck(DeploymentTrust trust) implements X509TrustManager {
    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      try {
        trust.verify(chain, CertificateUsage.TLS_SERVER);
      } catch (KeyExchangeException e) {
        throw new ForeignCertificateRefused(e);
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      throw new CertificateException("client side only");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[] {trust.caCertificate()};
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // nothing was connected
    }
  }
}
