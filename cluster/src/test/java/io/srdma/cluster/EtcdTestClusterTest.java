package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.GetResponse;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.Pem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The test rig itself: a real 3-member etcd, mutual TLS only. */
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
      // the first request after a member dies may be stuck on its connection until the request
      // timeout (jetcd notices the dead connection late); the next one goes to a live member
      link.retryOnce(
          () ->
              link.await(
                  link.client()
                      .getKVClient()
                      .put(k, ByteSequence.from("2", StandardCharsets.UTF_8)),
                  "put"));
      GetResponse r = link.await(link.client().getKVClient().get(k), "get");
      assertEquals("2", r.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8));
    }
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
      Files.writeString(cert, Pem.toPem(foreign.certificate()));
      Files.writeString(key, Pem.toPem(foreign.privateKey(), null));
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
