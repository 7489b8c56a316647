package io.srdma.cluster;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The deployment's live grants, for consoles and {@code srdma grant}: one range read lists them
 * all; deleting one's key has its host revoke it (within its watch latency).
 */
public final class GrantDirectory {
  private GrantDirectory() {}

  /**
   * Every live grant of the deployment (those whose host published them and whose lease has not run
   * out), by host then id.
   *
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer
   */
  public static List<ClusterGrant> list(EtcdLink link) {
    GetResponse r =
        link.retryOnce(
            () ->
                link.await(
                    link.client()
                        .getKVClient()
                        .get(link.keys().grants(), GetOption.builder().isPrefix(true).build()),
                    "listing grants"));
    List<ClusterGrant> out = new ArrayList<>();
    for (KeyValue kv : r.getKvs()) {
      try {
        out.add(ClusterGrant.parse(kv.getValue().getBytes()));
      } catch (ClusterException e) {
        // one bad entry does not hide the others
      }
    }
    out.sort(Comparator.comparing(ClusterGrant::host).thenComparingLong(ClusterGrant::grantId));
    return out;
  }

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
}
