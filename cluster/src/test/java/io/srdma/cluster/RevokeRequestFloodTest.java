package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.srdma.keys.CertificateUsage;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import java.math.BigInteger;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Another host (h2, which etcd RBAC lets write {@code requests/h2/h1/*}) floods well-formed revoke
 * requests addressed to h1 that match none of its 2,000 grants. Requests are matched on their own
 * thread, in batches, so a CRL published meanwhile is in force on h1 within the second the docs
 * promise (each request was a task on the apply thread before, with one reading of every live
 * grant: the CRL waited 27 s behind a flood of 8 s), and the flood is counted, not logged line by
 * line.
 */
@Timeout(300)
class RevokeRequestFloodTest {
  private static final String PREFIX = "/srdma/flood";
  private static final int LIVE_GRANTS = 2_000;
  @TempDir Path dir;

  /**
   * A host with LIVE_GRANTS live grants; live() builds them afresh as ServeCluster's adapter does.
   */
  static final class ManyGrants implements HostGrants {
    final Instant expiry = Instant.now().plus(Duration.ofHours(1));

    @Override
    public List<ClusterGrant> live() {
      List<ClusterGrant> out = new ArrayList<>(LIVE_GRANTS);
      for (int i = 1; i <= LIVE_GRANTS; i++) {
        out.add(
            new ClusterGrant(
                "h1",
                i,
                "acme",
                "srdma://acme/trainer-" + i,
                "kvcache",
                4096L * i,
                4096,
                "read,write",
                expiry));
      }
      return out;
    }

    @Override
    public boolean revoke(long grantId, String actor) {
      return false;
    }
  }

  private static boolean refuses(DeploymentTrust trust, Credential c) {
    try {
      trust.verify(
          new java.security.cert.X509Certificate[] {c.certificate()}, CertificateUsage.TLS_CLIENT);
      return false;
    } catch (KeyExchangeException e) {
      return e.reason() == KeyExchangeException.Reason.CERTIFICATE_REVOKED;
    }
  }

  @Test
  void shouldPutARevocationInForceWithinASecondWhileAnotherHostFloodsRevokeRequests()
      throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"));
        EtcdLink console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
        EtcdLink h2 = EtcdLink.open(etcd.clientConfig(PREFIX, "h2"))) {
      DeploymentCa ca = etcd.ca();
      RevocationList list = RevocationList.of(ca.crl(), ca.certificate());
      DeploymentTrust trust = DeploymentTrust.of(ca.certificate(), list);
      try (ClusterNode h1 =
          ClusterNode.start(
              new ClusterNode.Options()
                  .config(etcd.clientConfig(PREFIX, "h1"))
                  .host("h1")
                  .revocations(list, null)
                  .grants(new ManyGrants()))) {
        Await.until(
            Duration.ofSeconds(10),
            "h1 connected",
            () -> h1.state() == ClusterNode.State.CONNECTED);
        Await.until(
            Duration.ofSeconds(60),
            "h1's grants published",
            () -> GrantDirectory.list(console).size() == LIVE_GRANTS);
        Credential peer = ca.issuePeer(PeerIdentity.of("acme", "trainer-x"), Duration.ofDays(1));
        assertFalse(refuses(trust, peer));

        // h2 writes, under its own requests/h2/, well-formed requests to h1 naming no grant of it
        Semaphore inFlight = new Semaphore(128);
        AtomicLong written = new AtomicLong();
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        Instant far = Instant.now().plus(Duration.ofHours(1));
        for (long i = 0; System.nanoTime() < end; i++) {
          inFlight.acquire();
          ClusterGrant g =
              new ClusterGrant(
                  "h1", 1_000_000 + i, "acme", "srdma://acme/x", "kvcache", 0, 4096, "read", far);
          ByteSequence key = h2.keys().revokeRequest("h2", "h1", 1_000_000 + (i % 1000));
          h2.client()
              .getKVClient()
              .put(key, ByteSequence.from(g.toJson()))
              .whenComplete(
                  (r, x) -> {
                    if (x == null) {
                      written.incrementAndGet();
                    }
                    inFlight.release();
                  });
        }
        inFlight.acquire(128);
        assertTrue(written.get() > 1000, "the flood: " + written.get() + " requests");

        BigInteger serial = peer.certificate().getSerialNumber();
        assertTrue(ca.revoke(serial));
        long t0 = System.nanoTime();
        assertTrue(
            RevocationPublisher.publish(console, ca.crl(), List.of(serial), ca.certificate())
                .changed());
        Await.until(Duration.ofSeconds(120), "revoked on h1 at all", () -> refuses(trust, peer));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms <= 1000, "revocation took " + ms + " ms on h1 (docs: within 1 s)");
      }
    }
  }

  /** Grants whose reading blocks on the request-matching thread while {@code stuck} is held. */
  static final class StuckMatcher implements HostGrants {
    final FakeGrants grants = new FakeGrants("h1");
    final java.util.concurrent.CountDownLatch stuck = new java.util.concurrent.CountDownLatch(1);
    volatile boolean waiting;

    @Override
    public List<ClusterGrant> live() {
      if (Thread.currentThread().getName().equals(RevokeRequests.THREAD_NAME)) {
        waiting = true;
        try {
          stuck.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return grants.live();
    }

    @Override
    public boolean revoke(long grantId, String actor) {
      return grants.revoke(grantId, actor);
    }
  }

  @Test
  void shouldActOnARequestThatFoundTheQueueFullOnceItReadsThemAgain() throws Exception {
    java.util.concurrent.ScheduledExecutorService apply =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    StuckMatcher grants = new StuckMatcher();
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"));
        EtcdLink h1 = EtcdLink.open(etcd.clientConfig(PREFIX, "h1"));
        EtcdLink h2 = EtcdLink.open(etcd.clientConfig(PREFIX, "h2"))) {
      ClusterGrantSync sync =
          new ClusterGrantSync(h1, "h1", grants, apply, () -> true, java.time.Clock.systemUTC());
      try {
        sync.resync();
        sync.start();
        ClusterGrant seven = grants.grants.issue(7, Duration.ofMinutes(5));
        Instant far = Instant.now().plus(Duration.ofHours(1));
        // the matcher takes a first request and sticks in reading the live grants
        put(
            h2,
            999_999,
            new ClusterGrant("h1", 999_999, "acme", "p", "kvcache", 0, 1, "read", far));
        Await.until(Duration.ofSeconds(5), "the matcher stuck", () -> grants.waiting);
        // more requests than the queue holds, then the one that names grant 7
        Semaphore inFlight = new Semaphore(128);
        AtomicLong failed = new AtomicLong();
        for (int i = 0; i < RevokeRequests.PENDING + 100; i++) {
          inFlight.acquire();
          h2.client()
              .getKVClient()
              .put(
                  h2.keys().revokeRequest("h2", "h1", 1_000_000 + (i % 500)),
                  ByteSequence.from(
                      new ClusterGrant(
                              "h1", 1_000_000 + i, "acme", "p", "kvcache", 0, 1, "read", far)
                          .toJson()))
              .whenComplete(
                  (r, x) -> {
                    if (x != null) {
                      failed.incrementAndGet();
                    }
                    inFlight.release();
                  });
        }
        inFlight.acquire(128);
        assertEquals(0, failed.get(), "every request written");
        Await.until(Duration.ofSeconds(10), "the queue full", () -> sync.droppedRequests() > 0);
        Thread.sleep(500); // the last requests' events delivered
        long dropped = sync.droppedRequests();
        put(h2, 7, seven);
        Await.until(
            Duration.ofSeconds(5),
            "the request for grant 7 dropped",
            () -> sync.droppedRequests() == dropped + 1);
        assertTrue(sync.broken(), "a dropped request has the next probe read them all again");
        grants.stuck.countDown();
        Thread.sleep(500);
        assertFalse(grants.grants.revoked.containsKey(7L), "dropped: not acted on yet");
        sync.resync(); // as the next probe does: every request read again
        Await.until(
            Duration.ofSeconds(5), "grant 7 revoked", () -> grants.grants.revoked.containsKey(7L));
      } finally {
        sync.close();
        apply.shutdownNow();
      }
    }
  }

  private static void put(EtcdLink from, long id, ClusterGrant g) {
    from.await(
        from.client()
            .getKVClient()
            .put(from.keys().revokeRequest("h2", "h1", id), ByteSequence.from(g.toJson())),
        "writing a request");
  }
}
