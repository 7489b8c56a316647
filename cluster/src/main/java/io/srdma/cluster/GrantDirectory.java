package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The deployment's live grants, for consoles and {@code srdma grant}: range reads over one prefix
 * list them all (paged, {@link EtcdRange}); deleting one's key has its host revoke it (within its
 * watch latency). Under etcd RBAC only the owning host and operators may delete a grant key; a
 * host's console asks the owning host instead ({@link #requestRevoke}).
 */
public final class GrantDirectory {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(GrantDirectory.class);

  private GrantDirectory() {}

  /**
   * Every live grant of the deployment (those whose host published them and whose lease has not run
   * out), by host then id. An entry whose value names another grant than its key ({@code
   * grants/HOST/ID}) is skipped (the first one per listing logged): a host may write anything under
   * its own keys, but not speak for another host.
   *
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer
   */
  public static List<ClusterGrant> list(EtcdLink link) {
    // paged: one response must stay under gRPC's 4 MiB message limit (an entry is ~240 bytes;
    // 100,000 grants in one read were 23 MB and refused, docs/cluster.md "Scale"), and a value no
    // host writes (one host's junk under its own grants/HOST/) is skipped, not fatal to the list
    List<ClusterGrant> out = new ArrayList<>();
    long[] misplaced = {0};
    EtcdRange.scan(
        link,
        link.keys().grants(),
        false,
        MAX_GRANT_BYTES,
        "listing grants",
        kv -> {
          ClusterGrant g;
          try {
            g = ClusterGrant.parse(kv.getValue().getBytes());
          } catch (ClusterException e) {
            return; // one bad entry does not hide the others
          }
          // a host writes only under its own grants/HOST/ (RBAC), but what it writes there is its
          // own say: an entry counts only as the grant its key names, or one host could list
          // grants "of" another (and have an admin revoke that host's real grant of the same id)
          if (kv.getKey().equals(link.keys().grant(g.host(), g.grantId()))) {
            out.add(g);
          } else if (misplaced[0]++ == 0) {
            LOG.warn(
                "listing grants: skipped {}: its value names grant {} of {}",
                EtcdRange.escape(kv.getKey()),
                g.grantId(),
                g.host());
          }
        });
    out.sort(Comparator.comparing(ClusterGrant::host).thenComparingLong(ClusterGrant::grantId));
    return out;
  }

  /**
   * The largest grant value listed: a grant's JSON is ~240 bytes (names included), so 16 KiB is
   * ample margin; a larger value is skipped and logged.
   */
  static final int MAX_GRANT_BYTES = RevokeRequests.MAX_REQUEST_BYTES;

  /**
   * Revokes a grant anywhere in the deployment: deletes its key; its host revokes it.
   *
   * @return false if no such grant was listed (ended, expired, or never published)
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer
   */
  public static boolean revoke(EtcdLink link, String host, long grantId) {
    DeleteResponse d =
        link.retryOnce(
            () ->
                link.await(
                    link.client().getKVClient().delete(link.keys().grant(host, grantId)),
                    "revoking grant " + grantId + " of " + host));
    return d.getDeleted() > 0;
  }

  /**
   * Revokes a grant of any host as host {@code from} may under etcd RBAC: its own grant by deleting
   * the key ({@link #revoke}); another host's by writing a request under {@code
   * PREFIX/requests/FROM/HOST/ID} (leased until the grant's expiry), which that host acts on (it
   * checks the request names a grant it has, with the same expiry and peer), then waiting at most
   * {@code wait} for the grant's key to go.
   *
   * @return false if no such grant was listed
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer or the host did not revoke
   *     the grant within {@code wait} (the request stays: the host acts on it when it next reaches
   *     etcd, until the grant's expiry); {@code DENIED} if this client's etcd user may not write
   *     {@code PREFIX/requests/FROM/}
   */
  public static boolean requestRevoke(
      EtcdLink link, String from, String host, long grantId, Duration wait) {
    if (from.equals(host)) {
      return revoke(link, host, grantId);
    }
    ByteSequence key = link.keys().grant(host, grantId);
    GetResponse r =
        link.retryOnce(() -> link.await(link.client().getKVClient().get(key), "reading the grant"));
    if (r.getKvs().isEmpty()) {
      return false;
    }
    byte[] value = r.getKvs().get(0).getValue().getBytes();
    ClusterGrant g = ClusterGrant.parse(value);
    long ttl = Math.max(1, Duration.between(Instant.now(), g.expiresAt()).toSeconds() + 1);
    long lease =
        link.await(link.client().getLeaseClient().grant(ttl), "leasing the revoke request").getID();
    link.await(
        link.client()
            .getKVClient()
            .put(
                link.keys().revokeRequest(from, host, grantId),
                ByteSequence.from(value),
                PutOption.builder().withLeaseId(lease).build()),
        "asking " + host + " to revoke grant " + grantId);
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      GetResponse now =
          link.retryOnce(
              () ->
                  link.await(
                      link.client()
                          .getKVClient()
                          .get(key, GetOption.builder().withCountOnly(true).build()),
                      "reading the grant"));
      if (now.getCount() == 0) {
        // done: the request's lease goes with its key
        link.client().getLeaseClient().revoke(lease);
        return true;
      }
      if (System.nanoTime() > deadline) {
        throw new ClusterException(
            ClusterException.Reason.UNAVAILABLE,
            host
                + " has not revoked grant "
                + grantId
                + " within "
                + wait
                + "; the request stands until the grant's expiry, and "
                + host
                + " acts on it when it reaches etcd");
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ClusterException(
            ClusterException.Reason.INTERRUPTED, "waiting for " + host + " to revoke", e);
      }
    }
  }
}
