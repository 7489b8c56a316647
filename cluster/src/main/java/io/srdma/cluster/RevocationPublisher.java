package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.RevocationList;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the deployment CA's signed revocation list to etcd ({@code srdma cert revoke} on a
 * clustered deployment), plus one key per newly revoked serial so the revocations are listable.
 * etcd carries the list, it does not vouch for it: every host checks the CA's signature and that
 * the CRL number never goes back ({@link io.srdma.keys.RevocationList#update}), so a writer to etcd
 * cannot un-revoke or revoke anything on its own. Written with a compare-and-swap on the revision
 * read; a list older than a CA-signed list etcd holds is refused. A held value that is not a list
 * validly signed by the CA (junk, or a forgery with a huge CRL number, which every host refused) is
 * overwritten, so it cannot stall later revocations.
 */
public final class RevocationPublisher {
  private static final Logger LOG = LoggerFactory.getLogger(RevocationPublisher.class);

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
   * @param ca the deployment CA's certificate: {@code crl} must be signed by it, and a list held in
   *     etcd counts only if it is (as on the hosts, {@link RevocationList#update})
   * @return what happened
   * @throws ClusterException {@code REFUSED} if {@code crl} is not the CA's or has no CRL number,
   *     or etcd holds a CA-signed list that is newer (or of the same number, different); {@code
   *     CONFLICT} if another console published at the same moment, {@code UNAVAILABLE} if etcd does
   *     not answer
   */
  public static Published publish(
      EtcdLink link, X509CRL crl, Collection<BigInteger> newlyRevoked, X509Certificate ca) {
    Objects.requireNonNull(ca, "ca");
    // a retry after a timeout finds its own earlier write (same list) and reports it unchanged
    return link.retryOnce(() -> write(link, crl, newlyRevoked, ca));
  }

  private static Published write(
      EtcdLink link, X509CRL crl, Collection<BigInteger> newlyRevoked, X509Certificate ca) {
    ByteSequence key = link.keys().crl();
    byte[] pem = Crls.encode(crl);
    BigInteger number;
    try {
      // the hosts' own check: issued and signed by the CA, with a CRL number
      number = RevocationList.of(crl, ca).number();
    } catch (KeyExchangeException e) {
      throw new ClusterException(
          ClusterException.Reason.REFUSED,
          "this revocation list would be refused by every host: " + e.getMessage(),
          e);
    }
    GetResponse current =
        link.await(link.client().getKVClient().get(key), "reading the revocation list");
    long rev = 0;
    if (!current.getKvs().isEmpty()) {
      rev = current.getKvs().get(0).getModRevision();
      byte[] held = current.getKvs().get(0).getValue().getBytes();
      BigInteger heldNumber = verifiedNumber(held, ca, rev);
      // not the CA's: every host refused it; overwritten, still by compare-and-swap on rev
      int order = heldNumber == null ? 1 : number.compareTo(heldNumber);
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

  /**
   * The CRL number of the held value if it is a list issued and validly signed by {@code ca}
   * (checked as the hosts check it), else {@code null}, with a warning naming what was found
   * (escaped and bounded: the value was written by whoever can write the key).
   */
  private static BigInteger verifiedNumber(byte[] held, X509Certificate ca, long rev) {
    X509CRL heldCrl;
    try {
      heldCrl = Crls.decode(held);
    } catch (RuntimeException e) {
      heldCrl = null;
    }
    if (heldCrl == null) {
      LOG.warn(
          "etcd holds no revocation list at revision {} ({} bytes, not an X.509 CRL); every host"
              + " refused it: overwriting it",
          rev,
          held.length);
      return null;
    }
    try {
      return RevocationList.of(heldCrl, ca).number();
    } catch (KeyExchangeException e) {
      BigInteger claimed = Crls.number(heldCrl);
      LOG.warn(
          "etcd holds a revocation list at revision {} that every host refused ({}; issuer {},"
              + " claimed number {}): overwriting it",
          rev,
          e.getMessage(),
          EtcdRange.escape(
              ByteSequence.from(
                  heldCrl.getIssuerX500Principal().getName(), StandardCharsets.UTF_8)),
          claimed.signum() < 0
              ? "none"
              : claimed.bitLength() > 128 ? "(" + claimed.bitLength() + " bits)" : claimed);
      return null;
    }
  }
}
