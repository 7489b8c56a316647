package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.PutOption;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * How far the cluster scales (docs/cluster.md, "Scale"): a simulated fleet of host watchers in one
 * JVM against the 3-member etcd. Each simulated host follows the deployment's revocation list as a
 * real one does ({@link KeyWatch}); the fleet's live grants are leased keys as {@link
 * ClusterGrantSync} writes them (one lease per grant). Measured: the write rate of the grants, the
 * revocation latency from the CRL write to each host's watcher (p50/p99/max), and memory (this
 * JVM's heap, each etcd member's resident set).
 *
 * <p>Not part of the normal build (it loads the machine): runs only with {@code
 * -Dsrdma.cluster.scale=HOSTS,GRANTS}, e.g. {@code 1000,100000}; results go to standard output and
 * {@code target/cluster-scale.txt}.
 */
class ClusterScaleTest {
  /** Simulated hosts per etcd client (gRPC connection); a real host has one client of its own. */
  private static final int HOSTS_PER_CLIENT = 50;

  @TempDir Path dir;

  @Test
  @Timeout(3600)
  void shouldMeasureRevocationFanOutAndLeasedGrantWrites() throws Exception {
    String spec = System.getProperty("srdma.cluster.scale");
    assumeTrue(
        spec != null && spec.matches("[0-9]+,[0-9]+"),
        "scale run not requested: -Dsrdma.cluster.scale=HOSTS,GRANTS (e.g. 1000,100000)");
    int hosts = Integer.parseInt(spec.split(",")[0]);
    int grants = Integer.parseInt(spec.split(",")[1]);
    String prefix = "/srdma/scale";
    StringBuilder report = new StringBuilder();
    ExecutorService apply = Executors.newFixedThreadPool(4);
    List<EtcdLink> links = new ArrayList<>();
    List<KeyWatch> watches = new ArrayList<>();
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"));
        EtcdLink writer = EtcdLink.open(etcd.clientConfig(prefix, null))) {
      long[] rss0 = rss(etcd);
      // the fleet: every host follows the CRL key
      AtomicLongArray arrived = new AtomicLongArray(hosts);
      AtomicLong revocationStart = new AtomicLong();
      for (int h = 0; h < hosts; h++) {
        if (h % HOSTS_PER_CLIENT == 0) {
          links.add(EtcdLink.open(etcd.clientConfig(prefix, null)));
        }
        EtcdLink link = links.get(links.size() - 1);
        int index = h;
        KeyWatch w =
            new KeyWatch(
                link,
                link.keys().crl(),
                "crl of host " + h,
                (value, rev) -> {
                  arrived.set(index, System.nanoTime());
                  return KeyWatch.Outcome.APPLIED;
                },
                apply);
        w.resync();
        watches.add(w);
      }
      report.append(
          String.format(
              "fleet: %d host watchers over %d etcd clients, %d live grants%n",
              hosts, links.size(), grants));

      // the fleet's live grants: one lease (TTL 1 h) and one key per grant, 256 in flight
      Semaphore inFlight = new Semaphore(256);
      AtomicLong failed = new AtomicLong();
      long t0 = System.nanoTime();
      for (int g = 0; g < grants; g++) {
        inFlight.acquire();
        String host = "h" + (g % Math.max(1, hosts));
        ClusterGrant grant =
            new ClusterGrant(
                host,
                g,
                "acme",
                "srdma://acme/p" + g,
                "kvcache",
                0,
                4096,
                "read,write",
                Instant.now().plus(Duration.ofHours(1)));
        writer
            .client()
            .getLeaseClient()
            .grant(3600)
            .thenCompose(
                l ->
                    writer
                        .client()
                        .getKVClient()
                        .put(
                            writer.keys().grant(host, grant.grantId()),
                            ByteSequence.from(grant.toJson()),
                            PutOption.builder().withLeaseId(l.getID()).build()))
            .whenComplete(
                (r, x) -> {
                  if (x != null) {
                    failed.incrementAndGet();
                  }
                  inFlight.release();
                });
      }
      inFlight.acquire(256);
      inFlight.release(256);
      double seconds = (System.nanoTime() - t0) / 1e9;
      report.append(
          String.format(
              "grants written: %d in %.1f s = %.0f grants/s (%.0f etcd requests/s: lease grant +"
                  + " put), %d failed%n",
              grants, seconds, grants / seconds, 2 * grants / seconds, failed.get()));
      long listStart = System.nanoTime();
      int listed = GrantDirectory.list(writer).size();
      assertEquals(grants, listed, "grants listed");
      report.append(
          String.format(
              "all grants listed (range reads of at most %d): %d in %d ms%n",
              EtcdRange.PAGE_KEYS, listed, (System.nanoTime() - listStart) / 1_000_000));

      // a revocation: the CA's new list written once, followed by every host
      DeploymentCa ca = etcd.ca();
      Credential peer = ca.issuePeer(PeerIdentity.of("acme", "revoked"), Duration.ofDays(1));
      BigInteger serial = peer.certificate().getSerialNumber();
      ca.revoke(serial);
      revocationStart.set(System.nanoTime());
      RevocationPublisher.publish(writer, ca.crl(), List.of(serial), ca.certificate());
      Await.until(
          Duration.ofMinutes(2),
          "every host has the revocation",
          () -> {
            for (int h = 0; h < hosts; h++) {
              if (arrived.get(h) == 0) {
                return false;
              }
            }
            return true;
          });
      long[] ms = new long[hosts];
      for (int h = 0; h < hosts; h++) {
        ms[h] = (arrived.get(h) - revocationStart.get()) / 1_000;
      }
      Arrays.sort(ms);
      report.append(
          String.format(
              "revocation latency (CRL write -> host watcher), µs: p50 %d, p99 %d, max %d%n",
              ms[hosts / 2], ms[Math.min(hosts - 1, (int) (hosts * 0.99))], ms[hosts - 1]));
      System.gc();
      Runtime rt = Runtime.getRuntime();
      long[] rss1 = rss(etcd);
      report.append(
          String.format(
              "memory: this JVM's heap in use %d MiB (all watchers and clients); etcd members'"
                  + " resident set %s KiB before, %s KiB after%n",
              (rt.totalMemory() - rt.freeMemory()) >> 20,
              Arrays.toString(rss0),
              Arrays.toString(rss1)));
      assertEquals(0, failed.get(), report.toString());
    } finally {
      for (KeyWatch w : watches) {
        w.close();
      }
      for (EtcdLink l : links) {
        l.close();
      }
      apply.shutdownNow();
      apply.awaitTermination(10, TimeUnit.SECONDS);
      System.out.print(report);
      Path out = Path.of("target", "cluster-scale.txt");
      if (Files.isDirectory(out.getParent())) {
        Files.writeString(out, report.toString(), StandardCharsets.UTF_8);
      }
    }
  }

  private static long[] rss(EtcdTestCluster etcd) {
    long[] out = new long[EtcdTestCluster.MEMBERS];
    for (int i = 0; i < out.length; i++) {
      out[i] = etcd.memberRssKib(i);
    }
    return out;
  }
}
