package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.srdma.keys.CertificateUsage;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd 3.4 lets any authenticated user compact the key history (RBAC has no permission for it), so
 * a compromised host (h2, RBAC on) can compact, again and again, up to the newest revision. It also
 * writes 20,000 small keys under its own {@code requests/h2/}, so reading {@code requests/} takes
 * twenty pages. h1, joining meanwhile, must still follow: be connected, publish its grant, revoke
 * it when an operator deletes its key, and put a CRL published meanwhile in force within a second.
 * Before, the second page was read at the first page's revision, which h2 had compacted away
 * ("required revision has been compacted"): h1's grant sync never resynced (degraded, nothing
 * published, no watch of its grant keys), and every watch started from a past revision was
 * cancelled.
 */
@Timeout(240)
class CompactionAttackTest {
  private static final String PREFIX = "/srdma/compaction";

  @TempDir Path dir;

  @Test
  void shouldKeepFollowingWhileAnotherHostCompactsTheHistory() throws Exception {
    try (RbacFleet fleet = RbacFleet.start(dir.resolve("etcd"), PREFIX, "h1", "h2")) {
      DeploymentCa ca = fleet.etcd().ca();
      RevocationList revocations = RevocationList.of(ca.crl(), ca.certificate());
      DeploymentTrust trust = DeploymentTrust.of(ca.certificate(), revocations);
      FakeGrants g1 = new FakeGrants("h1");
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong compactions = new AtomicLong();
      EtcdLink operator = fleet.operator();
      EtcdLink h2 = fleet.link("h2");
      KV kv = h2.client().getKVClient();
      List<CompletableFuture<?>> puts = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) {
        puts.add(kv.put(key("/requests/h2/junk/" + i), key("x")));
        if (puts.size() == 256) {
          for (CompletableFuture<?> p : puts) {
            h2.await(p, "junk");
          }
          puts.clear();
        }
      }
      for (CompletableFuture<?> p : puts) {
        h2.await(p, "junk");
      }
      Thread compactor =
          new Thread(
              () -> {
                // 8 writes, each followed by a compaction up to its revision, in flight at once
                java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(8);
                while (!stop.get()) {
                  try {
                    inFlight.acquire();
                  } catch (InterruptedException e) {
                    return;
                  }
                  kv.put(key("/requests/h2/tick"), key("t"))
                      .thenCompose(r -> kv.compact(r.getHeader().getRevision()))
                      .whenComplete(
                          (r, x) -> {
                            if (x == null) {
                              compactions.incrementAndGet();
                            }
                            inFlight.release();
                          });
                }
              },
              "compactor");
      compactor.start();
      try {
        Await.until(Duration.ofSeconds(10), "h2 compacting", () -> compactions.get() > 5);
        try (ClusterNode n1 =
            ClusterNode.start(
                new ClusterNode.Options()
                    .config(fleet.config("h1"))
                    .host("h1")
                    .revocations(revocations, null)
                    .grants(g1))) {
          g1.issue(1, Duration.ofMinutes(5));
          Await.until(
              Duration.ofSeconds(10),
              "h1 connected and its grant listed while h2 compacts",
              () ->
                  n1.state() == ClusterNode.State.CONNECTED
                      && GrantDirectory.list(operator).stream()
                          .anyMatch(g -> g.host().equals("h1") && g.grantId() == 1));
          assertTrue(GrantDirectory.revoke(operator, "h1", 1));
          Await.until(
              Duration.ofSeconds(2), "grant 1 revoked on h1", () -> g1.revoked.containsKey(1L));

          Credential c = ca.issuePeer(PeerIdentity.of("acme", "mallory"), Duration.ofDays(1));
          BigInteger serial = c.certificate().getSerialNumber();
          assertTrue(ca.revoke(serial));
          RevocationPublisher.publish(operator, ca.crl(), List.of(serial), ca.certificate());
          Await.until(
              Duration.ofSeconds(1),
              "the revocation in force on h1",
              () -> refuses(trust, c.certificate()));
          assertTrue(compactions.get() > 20, "h2 kept compacting: " + compactions.get());
        }
      } finally {
        stop.set(true);
        compactor.join(10_000);
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

  private static ByteSequence key(String s) {
    return ByteSequence.from(s.startsWith("/") ? PREFIX + s : s, StandardCharsets.UTF_8);
  }
}
