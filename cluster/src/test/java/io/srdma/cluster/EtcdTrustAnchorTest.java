package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeyExchangeException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The etcd client trusts the cluster CA through the JDK's PKIX trust manager, which ignores the
 * anchor's own dates: a cluster node must stop trusting etcd once that CA has expired, while the
 * etcd server's own certificate (which may outlive its CA) is still in date.
 */
class EtcdTrustAnchorTest {
  @TempDir Path dir;

  @Test
  void shouldRefuseEtcdOnceTheClusterCaHasExpired() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    X509Certificate[] etcd = {
      // dated explicitly: issuing for a duration refuses a certificate that outlives its CA
      ca.issueServer(
              List.of("localhost", "127.0.0.1"),
              Instant.now().minusSeconds(60),
              Instant.now().plus(Duration.ofDays(4000)))
          .certificate()
    };
    Instant notAfter = ca.certificate().getNotAfter().toInstant();
    EtcdLink.trustManager(ca.certificate(), Clock.systemUTC()).checkServerTrusted(etcd, "UNKNOWN");
    X509TrustManager later =
        EtcdLink.trustManager(
            ca.certificate(), Clock.fixed(notAfter.plusSeconds(1), ZoneOffset.UTC));
    CertificateException e =
        assertThrows(CertificateException.class, () -> later.checkServerTrusted(etcd, "UNKNOWN"));
    KeyExchangeException why = assertInstanceOf(KeyExchangeException.class, e.getCause());
    assertEquals(KeyExchangeException.Reason.CA_EXPIRED, why.reason());
    assertTrue(why.getMessage().contains(notAfter.toString()), why.getMessage());
  }
}
