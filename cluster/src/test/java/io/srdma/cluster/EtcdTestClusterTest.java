package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.GetResponse;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The test rig itself: a real 3-member etcd, mutual TLS only (clients and peers). */
@Timeout(90)
class EtcdTestClusterTest {
  @TempDir Path dir;

  @Test
  void shouldWriteAndReadOverMutualTlsAndSurviveOneMemberDown() throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir);
        EtcdLink link = EtcdLink.open(etcd.clientConfig("/srdma/t", null))) {
      ByteSequence k = ByteSequence.from("/srdma/t/x", StandardCharsets.UTF_8);
      link.await(
          link.client().getKVClient().put(k, ByteSequence.from("1", StandardCharsets.UTF_8)),
          "put");
      etcd.stopMember(0);
      // the first requests after a member dies may be stuck on its connection until the request
      // timeout (jetcd notices the dead connection late), and if it led, the two left elect a new
      // leader first; on a loaded CI machine that can outlast retryOnce's two tries, so the rig is
      // judged by "writes succeed again within 30 s", not by the first two attempts
      putUntil(link, k, "2", Duration.ofSeconds(30));
      GetResponse r = link.await(link.client().getKVClient().get(k), "get");
      assertEquals("2", r.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void shouldRunPeerTrafficOverMutualTls() throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir)) {
      // a TLS client without a certificate: the peer port demands one (--peer-client-cert-auth)
      SSLContext tls = SSLContext.getInstance("TLS");
      tls.init(null, new TrustManager[] {trustAll()}, null);
      try (SSLSocket s =
          (SSLSocket)
              tls.getSocketFactory()
                  .createSocket(InetAddress.getLoopbackAddress(), etcd.peerPort(0))) {
        s.setSoTimeout(5000);
        // TLS 1.3 reports the missing certificate at the first read after the handshake
        assertThrows(
            IOException.class,
            () -> {
              s.startHandshake();
              s.getOutputStream().write("GET /version HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
              s.getOutputStream().flush();
              if (s.getInputStream().read() < 0) {
                throw new IOException("closed");
              }
            });
      }
      String peerTls =
          Files.readAllLines(dir.resolve("m0.log")).stream()
              .filter(l -> l.contains("starting with peer TLS"))
              .findFirst()
              .orElse("");
      assertTrue(peerTls.contains("client-cert-auth = true"), "member log: " + peerTls);
    }
  }

  @Test
  void shouldPickDistinctPortsForEveryMember() throws Exception {
    for (int round = 0; round < 200; round++) {
      int[] ports = EtcdTestCluster.distinctFreePorts(6);
      assertEquals(6, java.util.Arrays.stream(ports).distinct().count(), "round " + round);
    }
  }

  @Test
  void shouldRetryOnFreshPortsWhenAPortIsTaken() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
        EtcdTestCluster etcd = EtcdTestCluster.start(dir, taken.getLocalPort());
        EtcdLink link = EtcdLink.open(etcd.clientConfig("/srdma/t", null))) {
      assertTrue(etcd.attempts() > 1, "the first start found its port taken");
      assertTrue(etcd.endpoints().stream().noneMatch(u -> u.getPort() == taken.getLocalPort()));
      link.await(
          link.client()
              .getKVClient()
              .put(
                  ByteSequence.from("/srdma/t/x", StandardCharsets.UTF_8),
                  ByteSequence.from("1", StandardCharsets.UTF_8)),
          "put");
    }
  }

  private static void putUntil(EtcdLink link, ByteSequence k, String v, Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      try {
        link.await(
            link.client().getKVClient().put(k, ByteSequence.from(v, StandardCharsets.UTF_8)),
            "put");
        return;
      } catch (ClusterException e) {
        if (e.reason() != ClusterException.Reason.UNAVAILABLE || System.nanoTime() > deadline) {
          throw e;
        }
      }
    }
  }

  private static X509TrustManager trustAll() {
    return new X509TrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
      }
    };
  }

  @Test
  void shouldRefuseAClientWithoutACertificateOfTheDeploymentCa() throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir)) {
      // a client certificate from another CA: etcd refuses the TLS handshake
      DeploymentCa other = DeploymentCa.init(dir.resolve("other-ca"), "x".toCharArray());
      Credential foreign =
          other.issuePeer(io.srdma.keys.PeerIdentity.of("cluster", "intruder"), Duration.ofDays(1));
      Path cert = dir.resolve("foreign.crt");
      Path key = dir.resolve("foreign.key");
      foreign.writeTo(cert, key, null);
      ClusterConfig good = etcd.clientConfig("/srdma/t", null);
      ClusterConfig bad =
          ClusterConfig.builder()
              .endpoints(good.endpoints())
              .caCertificate(good.caCertificate())
              .certificate(cert)
              .key(key)
              .prefix("/srdma/t")
              .serverName("localhost")
              .requestTimeout(Duration.ofSeconds(1))
              .build();
      try (EtcdLink link = EtcdLink.open(bad)) {
        ClusterException e =
            assertThrows(
                ClusterException.class,
                () ->
                    link.await(
                        link.client()
                            .getKVClient()
                            .get(ByteSequence.from("/srdma/t/x", StandardCharsets.UTF_8)),
                        "get"));
        assertEquals(ClusterException.Reason.UNAVAILABLE, e.reason());
      }
    }
  }
}
