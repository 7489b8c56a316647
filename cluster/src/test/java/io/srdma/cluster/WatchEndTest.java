package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.CertificateUsage;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import java.math.BigInteger;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A watch that etcd (or a proxy in between, or a compromised member) ends without an error — the
 * stream completes, or a response says the watch was cancelled — is a lost watch: the host watches
 * again and re-reads, so a revocation, a deleted grant key and a revoke request written while it
 * was not watching are in force once it watches again. Before, jetcd's {@code onCompleted} was
 * ignored and the cancellation taken for a response without events: h1 heard nothing more while
 * reporting itself connected. Each round holds the host's next watches until everything is written,
 * so only the read that follows the new watches can find it (the gap between the end and the new
 * watch).
 */
@Timeout(180)
class WatchEndTest {
  private static final String PREFIX = "/srdma/watchend";

  @TempDir Path dir;

  @Test
  void shouldWatchAgainAndReReadWhenEtcdEndsAWatch() throws Exception {
    EndingWatches watches = new EndingWatches();
    try (RbacFleet fleet = RbacFleet.start(dir.resolve("etcd"), PREFIX, "h1", "h2")) {
      DeploymentCa ca = fleet.etcd().ca();
      RevocationList revocations = RevocationList.of(ca.crl(), ca.certificate());
      DeploymentTrust trust = DeploymentTrust.of(ca.certificate(), revocations);
      FakeGrants g1 = new FakeGrants("h1");
      List<BigInteger> revoked = new ArrayList<>();
      EtcdLink operator = fleet.operator();
      EtcdLink h2 = fleet.link("h2");
      try (ClusterNode n1 =
          ClusterNode.start(
              new ClusterNode.Options()
                  .config(fleet.config("h1"))
                  .host("h1")
                  .revocations(revocations, null)
                  .grants(g1)
                  .watches(watches))) {
        int round = 0;
        for (EndingWatches.End how : EndingWatches.End.values()) {
          long deleted = 2L * round + 1;
          long requested = 2L * round + 2;
          round++;
          g1.issue(deleted, Duration.ofMinutes(5));
          g1.issue(requested, Duration.ofMinutes(5));
          Await.until(
              Duration.ofSeconds(10),
              "h1 connected and grants " + deleted + " and " + requested + " listed",
              () ->
                  n1.state() == ClusterNode.State.CONNECTED
                      && GrantDirectory.list(operator).stream()
                              .filter(g -> g.grantId() == deleted || g.grantId() == requested)
                              .count()
                          == 2);

          watches.hold();
          int asked = watches.asked();
          // the revocation list's, this host's grants' and the revoke requests' watches
          assertEquals(3, watches.endAll(how), how + ": the watches ended");
          Await.until(
              Duration.ofSeconds(5), how + ": h1 watching again", () -> watches.asked() > asked);

          Credential c =
              ca.issuePeer(PeerIdentity.of("acme", "mallory" + round), Duration.ofDays(1));
          BigInteger serial = c.certificate().getSerialNumber();
          assertTrue(ca.revoke(serial));
          revoked.add(serial);
          RevocationPublisher.publish(operator, ca.crl(), revoked, ca.certificate());
          assertTrue(GrantDirectory.revoke(operator, "h1", deleted));
          // h1 is held: the request is written, and stands
          ClusterException held =
              assertThrows(
                  ClusterException.class,
                  () -> GrantDirectory.requestRevoke(h2, "h2", "h1", requested, Duration.ZERO));
          assertEquals(ClusterException.Reason.UNAVAILABLE, held.reason());
          assertTrue(g1.live.containsKey(deleted) && g1.live.containsKey(requested));
          watches.release();

          Await.until(
              Duration.ofSeconds(10),
              how + ": the revocation, the deleted key and the request in force on h1",
              () ->
                  refuses(trust, c.certificate())
                      && "cluster".equals(g1.revoked.get(deleted))
                      && "cluster".equals(g1.revoked.get(requested)));
        }
        Await.until(
            Duration.ofSeconds(5), "h1 connected", () -> n1.state() == ClusterNode.State.CONNECTED);
      } finally {
        watches.release();
      }
    }
  }

  private static boolean refuses(DeploymentTrust trust, X509Certificate cert) {
    try {
      trust.verify(new X509Certificate[] {cert}, CertificateUsage.TLS_CLIENT);
      return false;
    } catch (KeyExchangeException e) {
      return e.reason() == KeyExchangeException.Reason.CERTIFICATE_REVOKED;
    }
  }
}
