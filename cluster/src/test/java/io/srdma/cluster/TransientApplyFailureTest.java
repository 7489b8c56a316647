package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.CertificateUsage;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.HighWaterMark;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A revocation list or policy that could not be applied for a transient, local reason (the
 * CRL-number or policy-serial file could not be written: disk full, EIO, read-only remount) is not
 * lost: once the disk recovers, the next resync (as a cluster node does at each probe) applies it,
 * without anyone publishing it again (a republished identical value would be "unchanged" and not
 * written). Before the fix, {@link KeyWatch} counted the revision as applied before its sink ran,
 * so the revocation stayed out of force until a newer list was published or the host restarted. The
 * failure is caused by a directory in place of the file, so even root's rename fails.
 */
@Timeout(120)
class TransientApplyFailureTest {
  private static final String PREFIX = "/srdma/transient";
  @TempDir Path dir;

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
  void aRevocationRefusedOnceForATransientDiskErrorIsAppliedAtTheNextResync() throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"));
        EtcdLink console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
        EtcdLink link = EtcdLink.open(etcd.clientConfig(PREFIX, "h1"))) {
      DeploymentCa ca = etcd.ca();
      Path crlFile = dir.resolve("crl.pem");
      Files.write(crlFile, Crls.encode(ca.crl()));
      Path state = Files.createDirectories(dir.resolve("state"));
      Path numberFile = state.resolve("srdma-crl-number");
      RevocationList list = RevocationList.watching(crlFile, ca.certificate(), numberFile);
      DeploymentTrust trust = DeploymentTrust.of(ca.certificate(), list);
      ExecutorService apply = Executors.newSingleThreadExecutor();
      KeyWatch follower = new ClusterRevocationWatcher(link, list, crlFile, null).follower(apply);
      try {
        follower.resync();
        Credential peer = ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(1));
        assertFalse(refuses(trust, peer));

        // the number file cannot be written for a while (a directory in its place: even root fails)
        Files.deleteIfExists(numberFile); // written when the initial list was loaded
        Files.createDirectory(numberFile);
        BigInteger serial = peer.certificate().getSerialNumber();
        assertTrue(ca.revoke(serial));
        assertTrue(
            RevocationPublisher.publish(console, ca.crl(), List.of(serial), ca.certificate())
                .changed());
        Thread.sleep(1500); // the watched list arrives and is refused (IO_ERROR)
        assertFalse(refuses(trust, peer), "precondition: the first application failed");

        // the disk recovers; a reconnection resyncs the follower (as ClusterNode.tick does)
        Files.delete(numberFile);
        follower.markBroken();
        follower.resync();
        Await.until(
            Duration.ofSeconds(3),
            "the revocation in force after the disk recovered and the follower resynced",
            () -> refuses(trust, peer));
      } finally {
        follower.close();
        apply.shutdownNow();
      }
    }
  }

  @Test
  void aPolicyRefusedOnceForATransientDiskErrorIsAppliedAtTheNextResync() throws Exception {
    String sampleText;
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sampleText = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Policy sample = new PolicyLoader().parse("sample", sampleText);
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"));
        EtcdLink console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
        EtcdLink link = EtcdLink.open(etcd.clientConfig(PREFIX, "h1"))) {
      Path state = Files.createDirectories(dir.resolve("state"));
      Path serialFile = state.resolve("srdma-policy-serial");
      HighWaterMark serials = HighWaterMark.read(serialFile, "policy serial");
      GrantAuthority authority = new GrantAuthority(sample);
      ClusterPolicyWatcher watcher =
          new ClusterPolicyWatcher(
              link,
              "h1",
              authority,
              new PolicyWatcher.Listener() {
                @Override
                public void reloaded(ReloadResult result) {}

                @Override
                public void rejected(PolicyException error) {}
              },
              new PolicyLoader(),
              null,
              Clock.systemUTC(),
              etcd.ca().certificate(),
              serials);
      ExecutorService apply = Executors.newSingleThreadExecutor();
      KeyWatch follower = watcher.follower(apply);
      try {
        follower.resync();
        Files.createDirectory(serialFile); // the serial file cannot be written for a while
        PolicyPublisher.Pushed p =
            PolicyPublisher.push(
                console,
                "pushed.yaml",
                (sampleText + "\n# narrowed\n").getBytes(StandardCharsets.UTF_8),
                new PolicyLoader(),
                OptionalLong.empty(),
                etcd.ca());
        Thread.sleep(1500);
        assertFalse(authority.policy().sha256().equals(p.sha256()), "precondition: refused once");
        Files.delete(serialFile);
        follower.markBroken();
        follower.resync();
        Await.until(
            Duration.ofSeconds(3),
            "the pushed policy in force after the disk recovered and the follower resynced",
            () -> authority.policy().sha256().equals(p.sha256()));
      } finally {
        follower.close();
        apply.shutdownNow();
      }
    }
  }

  @Test
  void aPolicyWhoseListenerFailedOnceIsReloadedAgainAtTheNextResync() throws Exception {
    String sampleText;
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sampleText = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Policy sample = new PolicyLoader().parse("sample", sampleText);
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"));
        EtcdLink console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
        EtcdLink link = EtcdLink.open(etcd.clientConfig(PREFIX, "h1"))) {
      HighWaterMark serials =
          HighWaterMark.read(
              Files.createDirectories(dir.resolve("state")).resolve("srdma-policy-serial"),
              "policy serial");
      GrantAuthority authority = new GrantAuthority(sample);
      java.util.concurrent.atomic.AtomicInteger reloads =
          new java.util.concurrent.atomic.AtomicInteger();
      ClusterPolicyWatcher watcher =
          new ClusterPolicyWatcher(
              link,
              "h1",
              authority,
              new PolicyWatcher.Listener() {
                @Override
                public void reloaded(ReloadResult result) {
                  if (reloads.incrementAndGet() == 1) {
                    throw new IllegalStateException("the host could not take it this time");
                  }
                }

                @Override
                public void rejected(PolicyException error) {}
              },
              new PolicyLoader(),
              null,
              Clock.systemUTC(),
              etcd.ca().certificate(),
              serials);
      ExecutorService apply = Executors.newSingleThreadExecutor();
      KeyWatch follower = watcher.follower(apply);
      try {
        follower.resync();
        PolicyPublisher.Pushed p =
            PolicyPublisher.push(
                console,
                "pushed.yaml",
                (sampleText + "\n# narrowed\n").getBytes(StandardCharsets.UTF_8),
                new PolicyLoader(),
                OptionalLong.empty(),
                etcd.ca());
        Await.until(Duration.ofSeconds(3), "the listener told once", () -> reloads.get() == 1);
        Thread.sleep(KeyWatch.RETRY_FIRST.toMillis() + 100); // past the first back-off
        assertFalse(authority.policy().sha256().equals(p.sha256()), "not in force after a failure");
        assertTrue(follower.broken(), "a value not applied marks the follower broken");
        assertEquals(0, watcher.refusals(), "a failure to apply is no refusal of the value");
        String waiting = follower.unapplied();
        assertTrue(
            waiting != null && waiting.contains("not in force"),
            "reported as waiting (the node shows DEGRADED): " + waiting);

        follower.resync();
        Await.until(
            Duration.ofSeconds(3),
            "the pushed policy in force after the resync",
            () -> authority.policy().sha256().equals(p.sha256()));
        assertEquals(2, reloads.get(), "the listener told again");
        assertFalse(follower.broken());
        assertEquals(null, follower.unapplied(), "nothing waits any more");
        // settled now: a further resync hands nothing over again
        follower.resync();
        assertEquals(2, reloads.get());
        assertEquals(0, watcher.refusals());
      } finally {
        follower.close();
        apply.shutdownNow();
      }
    }
  }
}
