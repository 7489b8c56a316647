package io.srdma.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a host knows of its grant keys in etcd, and what each thing it learns about them means for
 * its grants: the rules that keep a revocation made in etcd (a console deleting a grant's key) from
 * being lost to a race with publishing, a lost answer or an outage.
 *
 * <p>A grant's key is, as far as the host knows: <em>written</em> (with its lease and the revision
 * of the write), <em>being written</em>, or <em>lost</em> (the write was sent but its answer never
 * came: it may be in etcd or not). A full read of the host's keys at a revision settles each:
 *
 * <ul>
 *   <li>written at or before the read and not listed: deleted while the host was not watching —
 *       revoke;
 *   <li>lost and listed under the lease it was sent with: it was written; lost and not so listed:
 *       whether a console deleted it cannot be told — revoke (fail closed);
 *   <li>a write answered after the read, at or before its revision, and not listed: deleted in
 *       between — revoke.
 * </ul>
 *
 * A deletion seen by the watch revokes, unless it is older than the host's own write of that key
 * (the deletion of an earlier key with the same id).
 *
 * <p>Not thread-safe: confined to the node's apply thread.
 */
final class GrantLedger {
  /** A grant key as written: its lease and the revision of the write. */
  record Written(long lease, long revision) {}

  /**
   * A grant to revoke.
   *
   * @param grantId the grant
   * @param why how the host knows, for its log
   */
  record Revoke(long grantId, String why) {}

  private final Map<Long, Written> written = new HashMap<>();
  private final Set<Long> writing = new HashSet<>();
  private final Map<Long, Long> lost = new HashMap<>(); // grant id -> the lease it was sent with
  private final Set<Long> withdrawing = new HashSet<>();
  private long readRevision; // of the last full read; 0 before the first
  private Set<Long> listed = Set.of(); // by the last full read

  /** Whether a grant needs no publishing now: written, being written, or its write's fate open. */
  boolean tracked(long id) {
    return written.containsKey(id) || writing.contains(id) || lost.containsKey(id);
  }

  /** A write of the grant's key is under way. */
  void writing(long id) {
    writing.add(id);
  }

  /** etcd refused the write (or its lease) outright: nothing was written; publish again later. */
  void refused(long id) {
    writing.remove(id);
  }

  /** The write under {@code lease} was sent but no answer came: it may or may not be in etcd. */
  void lost(long id, long lease) {
    writing.remove(id);
    lost.put(id, lease);
  }

  /**
   * The write landed under {@code lease} at {@code revision}.
   *
   * @return the revocation, if a full read at or after that revision did not list the key (it was
   *     deleted in between); else null
   */
  Revoke written(long id, long lease, long revision) {
    writing.remove(id);
    if (revision <= readRevision && !listed.contains(id)) {
      return new Revoke(id, "its key was deleted in the cluster just after it was written");
    }
    written.put(id, new Written(lease, revision));
    return null;
  }

  /**
   * A full read of the host's keys at {@code revision} listed {@code present} (grant id → lease and
   * the revision of its last write).
   *
   * @return the grants to revoke
   */
  List<Revoke> read(Map<Long, Written> present, long revision) {
    readRevision = revision;
    listed = Set.copyOf(present.keySet());
    List<Revoke> revoke = new ArrayList<>();
    for (Iterator<Map.Entry<Long, Written>> it = written.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, Written> e = it.next();
      if (!present.containsKey(e.getKey()) && e.getValue().revision() <= revision) {
        it.remove();
        withdrawing.remove(e.getKey());
        revoke.add(
            new Revoke(
                e.getKey(),
                "its key was deleted in the cluster while this host was not" + " following it"));
      }
    }
    for (Map.Entry<Long, Long> e : lost.entrySet()) {
      long id = e.getKey();
      Written w = present.get(id);
      if (w != null && w.lease() == e.getValue()) {
        written.put(id, w);
      } else {
        withdrawing.remove(id);
        revoke.add(
            new Revoke(
                id,
                "etcd's answer to its publication was lost and its key is not there,"
                    + " so a console may have deleted it"));
      }
    }
    lost.clear();
    return revoke;
  }

  /**
   * A watch saw the grant's key deleted at {@code revision}.
   *
   * @return whether that revokes the grant: false only for the deletion of an earlier key of the
   *     same id, older than this host's own write
   */
  boolean deleted(long id, long revision) {
    Written w = written.get(id);
    if (w != null && revision < w.revision()) {
      return false;
    }
    written.remove(id);
    lost.remove(id);
    withdrawing.remove(id);
    return true;
  }

  /**
   * The leases to revoke (which deletes their keys) of grants no longer live on the host, each once
   * until {@link #withdrawn} or {@link #withdrawFailed} says how it went.
   *
   * @return grant id → lease
   */
  Map<Long, Long> toWithdraw(Set<Long> live) {
    Map<Long, Long> out = new HashMap<>();
    for (Map.Entry<Long, Written> e : written.entrySet()) {
      if (!live.contains(e.getKey()) && withdrawing.add(e.getKey())) {
        out.put(e.getKey(), e.getValue().lease());
      }
    }
    for (Map.Entry<Long, Long> e : lost.entrySet()) {
      if (!live.contains(e.getKey()) && withdrawing.add(e.getKey())) {
        out.put(e.getKey(), e.getValue());
      }
    }
    return out;
  }

  /** The lease of an ended grant is gone (revoked, or not found: expired); so is its key. */
  void withdrawn(long id) {
    withdrawing.remove(id);
    written.remove(id);
    lost.remove(id);
  }

  /** Revoking the lease of an ended grant failed: it is tried again at the next reconcile. */
  void withdrawFailed(long id) {
    withdrawing.remove(id);
  }

  /** Every lease this host wrote a key under, or may have; forgets them all (the host stops). */
  List<Long> withdrawAll() {
    List<Long> leases = new ArrayList<>();
    for (Written w : written.values()) {
      leases.add(w.lease());
    }
    leases.addAll(lost.values());
    written.clear();
    lost.clear();
    withdrawing.clear();
    return leases;
  }
}
