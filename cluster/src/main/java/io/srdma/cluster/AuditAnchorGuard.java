package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.time.Clock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Anchors a host's audit head in etcd without ever anchoring over a line the log no longer holds.
 *
 * <p>Before the first anchor after start, and whenever the key changed under the host (a lost
 * compare-and-swap, an etcd restore), the anchor in etcd is read and checked against the chain
 * ({@link AuditAnchor.Chain}). If the chain does not hold the anchored line (the log was cut or
 * replaced while the host was down, or another process claims the host), the anchor is kept, the
 * mismatch is logged at ERROR, told to the {@link AuditAnchor.Listener} (the host audits it) and
 * reported as the node's degraded reason, and nothing is anchored until an operator drops the
 * anchor ({@link AuditAnchor#reset}); the guard then records the reset and anchors the current
 * head. Each anchor is written with a compare-and-swap on the revision the guard last read or
 * wrote. Probe thread only.
 */
final class AuditAnchorGuard {
  private static final Logger LOG = LoggerFactory.getLogger(AuditAnchorGuard.class);

  private final EtcdLink link;
  private final String host;
  private final Supplier<AuditAnchor.Head> head;
  private final AuditAnchor.Chain chain;
  private final AuditAnchor.Listener listener;
  private final Clock clock;

  private boolean checked; // the anchor in etcd was read and found in the chain (or absent)
  private long revision; // the key's mod revision as last read or written (0: absent)
  private long anchoredSeq = -1;
  private AuditAnchor kept; // the mismatched anchor, while held
  private long keptRevision;
  private volatile String held; // why nothing is anchored, or null

  AuditAnchorGuard(
      EtcdLink link,
      String host,
      Supplier<AuditAnchor.Head> head,
      AuditAnchor.Chain chain,
      AuditAnchor.Listener listener,
      Clock clock) {
    this.link = link;
    this.host = host;
    this.head = head;
    this.chain = chain;
    this.listener =
        listener != null
            ? listener
            : new AuditAnchor.Listener() {
              @Override
              public void mismatch(AuditAnchor kept, String problem) {}

              @Override
              public void reset(AuditAnchor dropped, String record) {}
            };
    this.clock = clock;
  }

  /** Why the host anchors nothing (the node reports it as degraded), or null. */
  String held() {
    return held;
  }

  /** One round: check the anchor if needed, then anchor the head if it moved. */
  void round() {
    if (!checked && !check()) {
      return;
    }
    AuditAnchor.Head h;
    try {
      h = head.get();
    } catch (RuntimeException e) {
      LOG.warn("audit head unavailable for anchoring: {}", e.toString());
      return;
    }
    if (h == null || h.seq() == anchoredSeq) {
      return;
    }
    AuditAnchor a = new AuditAnchor(host, h.seq(), h.mac(), clock.instant());
    ByteSequence key = link.keys().auditHead(host);
    TxnResponse r;
    try {
      r =
          link.await(
              link.client()
                  .getKVClient()
                  .txn()
                  .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(revision)))
                  .Then(Op.put(key, ByteSequence.from(a.toJson()), PutOption.DEFAULT))
                  .commit(),
              "anchoring the audit head");
    } catch (ClusterException e) {
      LOG.warn("could not anchor the audit head: {}", e.getMessage());
      return;
    }
    if (r.isSucceeded()) {
      revision = r.getHeader().getRevision();
      anchoredSeq = h.seq();
    } else {
      // written by someone else since this host last read or wrote it: another process claiming
      // this host, an operator, or an etcd restore; check it against the chain before going on
      LOG.error(
          "the audit anchor of {} changed in etcd since this host wrote it (another process"
              + " claiming this host?); checking it against the audit log before anchoring again",
          host);
      checked = false;
      anchoredSeq = -1;
    }
  }

  /** Reads the anchor and checks it; true if anchoring may go on. */
  private boolean check() {
    AuditAnchor.Stored s;
    try {
      s = AuditAnchor.readStored(link, host);
    } catch (ClusterException e) {
      if (e.reason() == ClusterException.Reason.MALFORMED) {
        hold(null, 0, "the audit anchor in etcd is malformed; not anchoring over it");
      } else {
        LOG.warn("could not read the audit anchor: {}", e.getMessage());
      }
      return false;
    }
    if (s == null) {
      // no anchor: a new host, or one an operator dropped (srdma cluster audit-reset), perhaps
      // while this host was down; a reset is recorded in the audit log before anything is anchored
      String record;
      try {
        record = AuditAnchor.readReset(link, host);
      } catch (ClusterException e) {
        LOG.warn("could not read the audit anchor reset record: {}", e.getMessage());
        return false;
      }
      if (kept != null || record != null) {
        LOG.warn(
            "the audit anchor of {}{} was dropped by an operator ({}); anchoring the current head",
            host,
            kept == null ? "" : " (seq " + kept.seq() + ")",
            record);
        try {
          listener.reset(kept, record);
        } catch (RuntimeException e) {
          LOG.error("could not record the audit anchor reset; trying again: {}", e.toString());
          return false;
        }
      }
      accept(0, -1);
      return true;
    }
    if (kept != null && s.modRevision() == keptRevision) {
      return false; // still the anchor found missing: nothing changed, nothing to check again
    }
    String problem;
    try {
      problem = chain.missing(s.anchor().seq(), s.anchor().mac());
    } catch (RuntimeException e) {
      held = "cannot check the audit anchor in etcd against the audit log: " + e.getMessage();
      LOG.warn("{}; trying again", held);
      return false;
    }
    if (problem != null) {
      hold(s.anchor(), s.modRevision(), problem);
      return false;
    }
    if (kept != null) {
      LOG.warn(
          "the audit anchor of {} was replaced in etcd by one this log holds (seq {}); anchoring"
              + " again",
          host,
          s.anchor().seq());
    }
    accept(s.modRevision(), s.anchor().seq());
    return true;
  }

  private void accept(long rev, long seq) {
    checked = true;
    revision = rev;
    anchoredSeq = seq;
    kept = null;
    keptRevision = 0;
    held = null;
  }

  private void hold(AuditAnchor a, long rev, String problem) {
    String before = held;
    kept = a;
    keptRevision = rev;
    held =
        a == null
            ? problem
            : "the audit log no longer holds the line anchored in etcd (seq "
                + a.seq()
                + "): cut or replaced while the host was down, or another process claims host "
                + host
                + "; the anchor is kept and nothing is anchored until an operator runs 'srdma"
                + " cluster audit-reset' ("
                + problem
                + ")";
    if (!held.equals(before)) {
      LOG.error("{}", held);
    }
    if (a != null) {
      try {
        listener.mismatch(a, problem);
      } catch (RuntimeException e) {
        LOG.error("could not record the audit anchor mismatch: {}", e.toString());
      }
    }
  }
}
