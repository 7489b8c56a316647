package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The deployment's live grants, for consoles and {@code srdma grant}: range reads over one prefix
 * list them all (paged by {@value #PAGE}); deleting one's key has its host revoke it (within its
 * watch latency).
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
    // paged: one response must stay under gRPC's 4 MiB message limit (an entry is ~240 bytes;
    // 100,000 grants in one read were 23 MB and refused, docs/cluster.md "Scale")
    ByteSequence end = prefixEnd(link.keys().grants());
    ByteSequence from = link.keys().grants();
    List<ClusterGrant> out = new ArrayList<>();
    while (true) {
      ByteSequence start = from;
      GetResponse r =
          link.retryOnce(
              () ->
                  link.await(
                      link.client()
                          .getKVClient()
                          .get(start, GetOption.builder().withRange(end).withLimit(PAGE).build()),
                      "listing grants"));
      for (KeyValue kv : r.getKvs()) {
        try {
          out.add(ClusterGrant.parse(kv.getValue().getBytes()));
        } catch (ClusterException e) {
          // one bad entry does not hide the others
        }
      }
      if (!r.isMore() || r.getKvs().isEmpty()) {
        break;
      }
      byte[] last = r.getKvs().get(r.getKvs().size() - 1).getKey().getBytes();
      from = ByteSequence.from(Arrays.copyOf(last, last.length + 1)); // the next key after it
    }
    out.sort(Comparator.comparing(ClusterGrant::host).thenComparingLong(ClusterGrant::grantId));
    return out;
  }

  /** Grants per range read. */
  static final int PAGE = 5_000;

  private static ByteSequence prefixEnd(ByteSequence prefix) {
    byte[] b = prefix.getBytes();
    b[b.length - 1]++; // the prefixes end in '/', never 0xff
    return ByteSequence.from(b);
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
