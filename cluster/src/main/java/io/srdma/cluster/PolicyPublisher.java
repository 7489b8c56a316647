package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.srdma.keys.DeploymentCa;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.util.OptionalLong;

/**
 * Writes a policy into etcd for every host of the deployment ({@code srdma policy push}). The text
 * is validated exactly as {@code srdma policy check} does ({@link PolicyLoader#parse}) before
 * anything is sent, then signed with the deployment CA's key ({@link SignedPolicy}: over the exact
 * bytes, a serial above the one etcd holds, and the deployment's prefix) and written with a
 * compare-and-swap on the revision read: a push racing another loses with {@link
 * ClusterException.Reason#CONFLICT} and writes nothing. Hosts put a pushed policy in force only if
 * the CA signed it for their prefix with a serial above the one they run.
 */
public final class PolicyPublisher {
  private PolicyPublisher() {}

  /**
   * What a push did.
   *
   * @param sha256 the pushed policy's hash, as hosts will report it
   * @param previousRevision the policy key's revision before (0: none was there)
   * @param revision the revision of the write, or {@code previousRevision} if unchanged
   * @param changed false if etcd already held exactly this text, validly signed
   * @param serial the signed serial now in etcd
   */
  public record Pushed(
      String sha256, long previousRevision, long revision, boolean changed, long serial) {}

  /**
   * Validates and pushes a policy.
   *
   * @param link the etcd link
   * @param label the file name used in error positions
   * @param utf8 the policy file's bytes
   * @param loader the loader (its size limit applies)
   * @param expectedRevision if present, the push happens only if the policy key is at exactly this
   *     revision now (0: absent), e.g. the one {@code policy status} showed
   * @param ca the deployment CA, whose key signs the policy
   * @return what happened
   * @throws io.srdma.policy.PolicyRejectedException if the file has errors (nothing is sent)
   * @throws ClusterException {@code CONFLICT} if another push won, {@code UNAVAILABLE} if etcd did
   *     not answer
   */
  public static Pushed push(
      EtcdLink link,
      String label,
      byte[] utf8,
      PolicyLoader loader,
      OptionalLong expectedRevision,
      DeploymentCa ca) {
    Policy policy = loader.parse(label, utf8);
    // a retry after a timeout finds its own earlier write (same text) and reports it unchanged
    return link.retryOnce(() -> write(link, policy, utf8, expectedRevision, ca));
  }

  private static Pushed write(
      EtcdLink link, Policy policy, byte[] utf8, OptionalLong expectedRevision, DeploymentCa ca) {
    ByteSequence key = link.keys().policy();
    GetResponse current = link.await(link.client().getKVClient().get(key), "reading the policy");
    long rev = current.getKvs().isEmpty() ? 0 : current.getKvs().get(0).getModRevision();
    if (expectedRevision.isPresent() && expectedRevision.getAsLong() != rev) {
      throw conflict(expectedRevision.getAsLong(), rev);
    }
    long heldSerial = 0;
    if (!current.getKvs().isEmpty()) {
      KeyValue kv = current.getKvs().get(0);
      try {
        SignedPolicy held =
            SignedPolicy.verify(kv.getValue().getBytes(), link.keys().prefix(), ca.certificate());
        heldSerial = held.serial();
        if (java.util.Arrays.equals(held.policy(), utf8)) {
          return new Pushed(policy.sha256(), rev, rev, false, heldSerial);
        }
      } catch (ClusterException e) {
        // not validly signed (written by someone without the CA key): hosts refused it; overwrite
      }
    }
    // above what etcd holds, and above anything a forged value may have hidden: the clock, in ms
    long serial = Math.max(Math.addExact(heldSerial, 1), System.currentTimeMillis());
    byte[] signed = SignedPolicy.sign(ca, link.keys().prefix(), serial, utf8);
    TxnResponse t =
        link.await(
            link.client()
                .getKVClient()
                .txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(rev)))
                .Then(Op.put(key, ByteSequence.from(signed), PutOption.DEFAULT))
                .commit(),
            "writing the policy");
    if (!t.isSucceeded()) {
      GetResponse now = link.await(link.client().getKVClient().get(key), "reading the policy");
      long newer = now.getKvs().isEmpty() ? 0 : now.getKvs().get(0).getModRevision();
      throw conflict(rev, newer);
    }
    return new Pushed(policy.sha256(), rev, t.getHeader().getRevision(), true, serial);
  }

  private static ClusterException conflict(long expected, long found) {
    return new ClusterException(
        ClusterException.Reason.CONFLICT,
        "the deployment's policy changed while this push was prepared (expected revision "
            + expected
            + ", found "
            + found
            + "); nothing was written: look at what is in force (srdma policy status --cluster)"
            + " and push again");
  }
}
