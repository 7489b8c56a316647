package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A watch that stays open but delivers nothing more (a proxy that stopped forwarding, a half-open
 * connection; or a member cut off that answers progress requests from its frozen revision) is found
 * by its unanswered progress request within the check period plus the request timeout, and is then
 * lost like an ended watch: the host watches again and re-reads, so a revocation and a deleted
 * grant key written during the silence are in force afterwards, and the host reports DEGRADED
 * (saying why) until its new watches answered. Before, the host heard nothing more and reported
 * itself connected. A live idle watch, asked and answering, is never restarted.
 */
@Timeout(180)
class WatchSilenceTest {
  private static final String PREFIX = "/srdma/watchsilence";
  private static final Duration PERIOD = Duration.ofMillis(500);

  @TempDir Path dir;

  @Test
  void shouldWatchAgainAndReReadWhenAWatchGoesSilent() throws Exception {
    SilentWatches watches = new SilentWatches();
    try (RbacFleet fleet = RbacFleet.start(dir.resolve("etcd"), PREFIX, "h1")) {
      DeploymentCa ca = fleet.etcd().ca();
      RevocationList revocations = RevocationList.of(ca.crl(), ca.certificate());
      DeploymentTrust trust = DeploymentTrust.of(ca.certificate(), revocations);
      FakeGrants g1 = new FakeGrants("h1");
      List<BigInteger> revoked = new ArrayList<>();
      EtcdLink operator = fleet.operator();
      ClusterConfig config = fleet.config("h1").toBuilder().watchCheckPeriod(PERIOD).build();
      // found within one period (to be asked) plus the request timeout (to answer), a probe late
      Duration found = PERIOD.plus(config.requestTimeout()).plus(ClusterNode.PROBE_PERIOD);
      try (ClusterNode n1 =
          ClusterNode.start(
              new ClusterNode.Options()
                  .config(config)
                  .host("h1")
                  .revocations(revocations, null)
                  .grants(g1)
                  .watches(watches))) {
        long grant = 0;
        for (SilentWatches.Silence how : SilentWatches.Silence.values()) {
          long id = ++grant;
          g1.issue(id, Duration.ofMinutes(5));
          Await.until(
              Duration.ofSeconds(10),
              how + ": h1 connected and grant " + id + " listed",
              () ->
                  n1.state() == ClusterNode.State.CONNECTED
                      && GrantDirectory.list(operator).stream().anyMatch(g -> g.grantId() == id));
          long silent = n1.silentWatches();
          long episodes = n1.status().degradedEpisodes();
          int asked = watches.asked();

          // the revocation list's, this host's grants' and the revoke requests' watches
          assertEquals(3, watches.silenceAll(how), how + ": the watches silenced");
          Credential c = ca.issuePeer(PeerIdentity.of("acme", "mallory" + id), Duration.ofDays(1));
          BigInteger serial = c.certificate().getSerialNumber();
          assertTrue(ca.revoke(serial));
          revoked.add(serial);
          RevocationPublisher.publish(operator, ca.crl(), revoked, ca.certificate());
          assertTrue(GrantDirectory.revoke(operator, "h1", id));

          AtomicBoolean saidSo = new AtomicBoolean();
          Await.until(
              found.plus(Duration.ofSeconds(5)), // slack for a loaded machine
              how + ": the silent watches found",
              () -> {
                ClusterNode.Status s = n1.status();
                if (s.state() == ClusterNode.State.DEGRADED
                    && s.lastError() != null
                    && s.lastError().contains("went silent")) {
                  saidSo.set(true);
                }
                return n1.silentWatches() > silent;
              });
          Await.until(
              Duration.ofSeconds(10),
              how + ": the revocation and the deleted key in force on h1, h1 connected again",
              () -> {
                ClusterNode.Status s = n1.status();
                if (s.state() == ClusterNode.State.DEGRADED
                    && s.lastError() != null
                    && s.lastError().contains("went silent")) {
                  saidSo.set(true);
                }
                return refuses(trust, c.certificate())
                    && "cluster".equals(g1.revoked.get(id))
                    && s.state() == ClusterNode.State.CONNECTED;
              });
          assertTrue(saidSo.get(), how + ": h1 reported DEGRADED, saying a watch went silent");
          assertTrue(n1.status().degradedEpisodes() > episodes, how + ": a degraded episode");
          // one found silent can take its follower's other watch with it (re-watched together)
          assertTrue(
              n1.silentWatches() <= silent + 3, how + ": each silent watch counted at most once");
          assertTrue(watches.asked() >= asked + 3, how + ": watched again");
        }
      }
    }
  }

  @Test
  void shouldNeverRestartALiveIdleWatch() throws Exception {
    SilentWatches watches = new SilentWatches();
    try (RbacFleet fleet = RbacFleet.start(dir.resolve("etcd"), PREFIX, "h1")) {
      DeploymentCa ca = fleet.etcd().ca();
      RevocationList revocations = RevocationList.of(ca.crl(), ca.certificate());
      ClusterConfig config = fleet.config("h1").toBuilder().watchCheckPeriod(PERIOD).build();
      try (ClusterNode n1 =
          ClusterNode.start(
              new ClusterNode.Options()
                  .config(config)
                  .host("h1")
                  .revocations(revocations, null)
                  .grants(new FakeGrants("h1"))
                  .watches(watches))) {
        Await.until(
            Duration.ofSeconds(10),
            "h1 connected",
            () -> n1.state() == ClusterNode.State.CONNECTED);
        long episodes = n1.status().degradedEpisodes();
        int asked = watches.asked();
        WatchLiveness liveness = n1.link().liveness();
        long answered = liveness.answered();
        // each of the three watches asked and answering, five times over, while nothing is written
        Await.until(
            Duration.ofSeconds(30),
            "fifteen progress requests answered",
            () -> liveness.answered() >= answered + 15);
        assertEquals(asked, watches.asked(), "no watch opened again");
        assertEquals(0, n1.silentWatches());
        assertEquals(ClusterNode.State.CONNECTED, n1.state());
        assertEquals(episodes, n1.status().degradedEpisodes(), "never degraded");
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
