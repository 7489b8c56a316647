package io.srdma.host;

import io.srdma.channel.SealedLayout;
import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordOpener;
import io.srdma.keys.KeySchedule;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session's receive path: a receive completion of its queue pair → the grant its slot names →
 * the record opened with the session's {@link RecordOpener} (replay window per session and epoch) →
 * the region's {@link RecordListener}; each receive reposted, and counted to the session's {@link
 * ReceiveCredits} where the client takes them. With record runs chosen ({@code RECORD_RUNS},
 * docs/protocol.md) one notification may carry several records end to end: each is opened at its
 * own offset and delivered on its own, until the WRITE's bytes are used: at most {@link
 * Capabilities#RUN_RECORDS} of one notification, and none once the grant or the session ended under
 * the run (an end waits for one record's delivery, not the run's). A notification whose WRITE is
 * longer than the records it may carry can be, each at most the host's {@code maxRecordPayload}
 * sealed, holds no honest run and is refused before anything of it is opened. Confined to the
 * session's {@link OpenerThread}, except {@link #recordsIn} and {@link #bytesIn}.
 */
final class RecordReceiver {
  private static final Logger LOG = LoggerFactory.getLogger(RecordReceiver.class);

  private final HostSession s;
  private final HostCounters counters;
  private final RecordOpener opener;
  private final KeySchedule schedule;
  private final QueuePair qp;
  private final ReceiveCredits credits; // null: the client takes none
  private final boolean runs; // RECORD_RUNS chosen: a notification may carry several records
  private final int maxRecords; // records one notification may carry: RUN_RECORDS, or 1
  private final long maxWriteBytes; // the most bytes maxRecords whole records take
  private final ReceiveWorkRequest receive = new ReceiveWorkRequest(1);
  private final AtomicLong recordsIn = new AtomicLong();
  private final AtomicLong bytesIn = new AtomicLong();
  private long notifications; // write notifications seen (the opener thread's)

  /** Whether a credit is owed that could not be written yet (the opener thread's). */
  boolean owing;

  RecordReceiver(
      HostSession session,
      RecordOpener opener,
      KeySchedule schedule,
      QueuePair qp,
      ReceiveCredits credits,
      boolean runs) {
    this.s = session;
    this.runs = runs;
    this.maxRecords = runs ? Capabilities.RUN_RECORDS : 1;
    this.maxWriteBytes =
        (long) maxRecords
            * (session.ctx.options().maxRecordPayload() + SealedLayout.RECORD_OVERHEAD);
    this.credits = credits;
    this.counters = session.ctx.counters();
    this.opener = opener;
    this.schedule = schedule;
    this.qp = qp;
  }

  long recordsIn() {
    return recordsIn.get();
  }

  long bytesIn() {
    return bytesIn.get();
  }

  /**
   * A receive completion of this session's queue pair (its opener thread), opened into {@code
   * plain} and delivered through {@code received}, both the opener thread's own.
   */
  void onReceive(WorkCompletion wc, ByteBuffer plain, ReceivedRecord received) {
    if (wc.status() != WcStatus.SUCCESS) {
      if (!s.qpFailed && !s.ended.get()) {
        s.qpFailed = true;
        counters.remoteAccessErrors.increment();
        // The receive side sees only the flush: a refused access by the peer and a broken data
        // path (peer gone, link down) look alike here, so the line names both.
        s.violation(
            "queue pair entered ERROR ("
                + wc.status()
                + "): the RNIC refused an access by the peer, or the data path broke");
        try {
          // A write that raced a grant's invalidation fails the queue pair: let that grant's
          // REVOKE notice go out first (an expiry's is queued on this timer: end after it), so
          // the holder hears "revoked", not only "session closed".
          s.ctx
              .timer()
              .execute(
                  () -> {
                    s.grants.afterNotices();
                    try {
                      s.ctx.timer().execute(() -> s.terminate("queue pair in error"));
                    } catch (RejectedExecutionException e) {
                      s.closeConnection();
                    }
                  });
        } catch (RejectedExecutionException e) {
          s.closeConnection(); // the host is closing: its close() ends the session anyway
        }
      }
      return;
    }
    try {
      if (s.ending.get() != null) {
        // the host is ending this session (certificate revoked, too many rejections…): nothing
        // more of it is opened or delivered, even what is already queued
        counters.recordsRejected.increment();
        return;
      }
      if (wc.opcode() != WcOpcode.RECV_RDMA_WITH_IMM) {
        reject(null, 0, wc.byteLength(), "unexpected " + wc.opcode() + " from the peer");
        return;
      }
      int imm = wc.immData();
      int slot = imm >>> 24;
      long seen = ++notifications;
      counters.writeNotifications.increment();
      s.notificationsSeen.lazySet(seen);
      HostGrant g = s.slots.takeForDelivery(slot); // marked until delivered: an end waits
      if (g == null && s.slots.lateForEnded(slot, seen, s.ctx.receiveDepth())) {
        // under way when the host ended its grant (revoke, expiry, reload): refused, not opened,
        // but not the peer's fault — no audit line, no cost to its rejection budget
        counters.staleNotifications.increment();
        counters.recordsRejected.increment();
        return;
      }
      if (g == null) {
        counters.staleNotifications.increment();
        reject(
            null,
            0,
            wc.byteLength(),
            "write notification names no live grant (slot "
                + slot
                + " is free or its grant ended)");
        return;
      }
      if (!g.writable) {
        // the record would be read where the notification says, not where this WRITE put its
        // bytes: a grant that may not write must not be the source of a delivered record (one
        // placed earlier under another, since revoked, WRITE grant included)
        reject(g, 0, wc.byteLength(), "write notification names a grant without WRITE");
        return;
      }
      long offset = g.live.offset() + (imm & 0xffffffL) * g.unit;
      long left = Integer.toUnsignedLong(wc.byteLength()); // of the WRITE, not yet opened
      if (offset >= g.end()) {
        reject(g, offset, left, "notified offset is outside the grant");
        return;
      }
      if (left > maxWriteBytes) {
        // more bytes than the records one notification may carry can take, each at most the
        // host's maxRecordPayload: no honest WRITE (an honest run is within them whatever its
        // records' sizes, the client's 64 KiB being only where it stops gathering), so refused
        // whole, before anything of it is opened or delivered
        reject(
            g,
            offset,
            left,
            "write of "
                + left
                + " bytes, more than "
                + maxRecords
                + " records of at most "
                + (maxWriteBytes / maxRecords)
                + " bytes take");
        return;
      }
      for (int opened = 0; ; ) {
        long space = Math.min(Math.min(left, g.end() - offset), Integer.MAX_VALUE);
        if (!openAndDeliver(g, offset, space, plain, received)) {
          return;
        }
        int used = opener.lastRecordLength();
        offset += used;
        left -= used;
        if (!runs || left <= 0) {
          return;
        }
        if (s.ending.get() != null || s.slots.hasEnded(g)) {
          // the host ended the grant (revoke, expiry, reload) or the session under the run: an
          // end returns once the record being delivered is, so the rest is not delivered; not
          // the peer's fault (no audit line, no cost to its rejection budget)
          counters.recordsRejected.increment();
          return;
        }
        if (++opened == Capabilities.RUN_RECORDS) {
          // one notification opens at most RUN_RECORDS records, whatever the grant's size
          reject(g, offset, left, "more than " + opened + " records in one write");
          return;
        }
      }
    } finally {
      s.slots.delivered();
      repost(wc.wrId());
    }
  }

  /**
   * Opens the record at {@code offset} ({@code space} bytes of the notification's WRITE for it,
   * within the grant) and hands it to the region's listener.
   *
   * @return false when it was refused (counted, audited or charged; the rest of the run is dropped)
   */
  private boolean openAndDeliver(
      HostGrant g, long offset, long space, ByteBuffer plain, ReceivedRecord received) {
    plain.clear();
    OpenResult r =
        opener.open(g.region.memory(), (int) offset, (int) space, g.binding, offset, plain);
    if (r != OpenResult.OK) {
      reject(g, offset, space, "record " + r);
      return false;
    }
    plain.flip();
    received.opened(plain);
    if (opener.lastEpoch() > schedule.epoch()) {
      schedule.rekey();
    }
    recordsIn.incrementAndGet();
    bytesIn.addAndGet(plain.remaining());
    counters.recordsOpened.increment();
    counters.bytesOpened.add(plain.remaining());
    RecordListener l = g.region.listener();
    if (l != null) {
      try {
        l.onRecord(received.set(s.identity, s.tenant, g.region.name(), g.id, offset, plain));
      } catch (RuntimeException e) {
        LOG.warn("record listener of {}/{} failed", s.tenant, g.region.name(), e);
      }
    }
    return true;
  }

  private void repost(long wrId) {
    if (!s.ended.get() && !s.qpFailed) {
      try {
        qp.postReceive(receive.wrId(wrId));
      } catch (VerbsException e) {
        LOG.debug("repost on session {}: {}", s.hexId, e.getMessage());
        return;
      }
      if (credits != null && !credits.reposted() && !owing) {
        owing = true;
        counters.receiveCreditsDeferred.increment();
        s.opener.owe(this);
      }
    }
  }

  /**
   * The opener thread, again: writes the credit owed.
   *
   * @return true when none is owed any more (or the session is over)
   */
  boolean flushCredits() {
    if (s.ended.get() || s.qpFailed || credits.flush()) {
      owing = false;
      return true;
    }
    return false;
  }

  /**
   * Counts a rejected record or notification; audits only the first few of a session, and ends the
   * session (once, audited once) when its budget is spent. The count comes after the audit line, so
   * whoever sees it counted finds it audited.
   */
  private void reject(HostGrant g, long offset, long length, String why) {
    RejectionBudget rejections = s.rejections;
    switch (rejections.reject()) {
      case AUDIT ->
          s.audit.accessViolation(
              s.identity,
              s.tenant,
              g == null ? null : g.region.name(),
              offset,
              Math.max(0, length),
              why
                  + (rejections.count() == RejectionBudget.AUDITED
                      ? "; further rejections of this session are counted, not audited"
                      : ""));
      case END -> s.endByHost(SessionEnd.REJECTED_RECORDS);
      case QUIET, SPENT -> {}
    }
    counters.recordsRejected.increment(); // last: a rejection seen counted is already audited
  }
}
