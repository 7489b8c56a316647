package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509CRL;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Publishes the deployment CA's signed revocation list to etcd ({@code srdma cert revoke} on a
 * clustered deployment), plus one key per newly revoked serial so the revocations are listable.
 * etcd carries the list, it does not vouch for it: every host checks the CA's signature and that
 * the CRL number never goes back ({@link io.srdma.keys.RevocationList#update}), so a writer to etcd
 * cannot un-revoke or revoke anything on its own. Written with a compare-and-swap on the revision
 * read; a list older than etcd's is refused.
 */
public final class RevocationPublisher {
  private RevocationPublisher() {}

  /**
   * What a publication did.
   *
   * @param number the CRL number now in etcd
   * @param revision the etcd revision of the write (or of the key, if unchanged)
   * @param changed false if etcd already held exactly this list
   */
  public record Published(BigInteger number, long revision, boolean changed) {}

  /**
   * Publishes a CRL.
   *
   * @param link the etcd link
   * @param crl the CA's current list
   * @param newlyRevoked serials revoked by this change (each gets a key under {@code revoked/})
   * @return what happened
   * @throws ClusterException {@code REFUSED} if etcd holds a newer list, {@code CONFLICT} if
   *     another console published at the same moment, {@code UNAVAILABLE} if etcd does not answer
   */
  public static Published publish(EtcdLink link, X509CRL crl, Collection<BigInteger> newlyRevoked) {
    // a retry after a timeout finds its own earlier write (same list) and reports it unchanged
    return link.retryOnce(() -> write(link, crl, newlyRevoked));
  }

  private static Published write(EtcdLink link, X509CRL crl, Collection<BigInteger> newlyRevoked) {
    ByteSequence key = link.keys().crl();
    byte[] pem = Crls.encode(crl);
    BigInteger number = Crls.number(crl);
    if (number.signum() < 0) {
      throw new ClusterException(
          ClusterException.Reason.REFUSED, "the revocation list carries no CRL number");
    }
    GetResponse current =
        link.await(link.client().getKVClient().get(key), "reading the revocation list");
    long rev = 0;
    if (!current.getKvs().isEmpty()) {
      rev = current.getKvs().get(0).getModRevision();
      byte[] held = current.getKvs().get(0).getValue().getBytes();
      BigInteger heldNumber = Crls.number(Crls.decode(held));
      int order = number.compareTo(heldNumber);
      if (order == 0 && java.util.Arrays.equals(held, pem)) {
        return new Published(number, rev, false);
      }
      if (order <= 0) {
        throw new ClusterException(
            ClusterException.Reason.REFUSED,
            "etcd holds revocation list number "
                + heldNumber
                + ", not older than this one ("
                + number
                + "); nothing was written");
      }
    }
    List<Op> ops = new ArrayList<>();
    ops.add(Op.put(key, ByteSequence.from(pem), PutOption.DEFAULT));
    String at = Instant.now().toString();
    for (BigInteger s : newlyRevoked) {
      String hex = s.toString(16);
      ops.add(
          Op.put(
              link.keys().revoked(hex),
              ByteSequence.from(
                  "{\"serial\":\"" + hex + "\",\"crl\":" + number + ",\"at\":\"" + at + "\"}",
                  StandardCharsets.UTF_8),
              PutOption.DEFAULT));
    }
    TxnResponse t =
        link.await(
            link.client()
                .getKVClient()
                .txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(rev)))
                .Then(ops.toArray(new Op[0]))
                .commit(),
            "writing the revocation list");
    if (!t.isSucceeded()) {
      throw new ClusterException(
          ClusterException.Reason.CONFLICT,
          "the revocation list in etcd changed while this one was published; nothing was"
              + " written: publish again");
    }
    return new Published(number, t.getHeader().getRevision(), true);
  }
}
