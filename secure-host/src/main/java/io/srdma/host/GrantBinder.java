package io.srdma.host;

import io.srdma.policy.LiveGrant;
import io.srdma.policy.Operation;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session's grants on the device: a type-2 window bound over exactly the granted range to the
 * session's queue pair (BIND_MW), or a memory region registered over exactly that range where
 * windows are not bounded; invalidated (LOCAL_INV) or deregistered when the grant ends. Each
 * BIND_MW and LOCAL_INV is waited for at most {@link #scopingWait}, on a shared thread (a worker,
 * the watchdog): past it the session's queue pair is failed. Thread-safe: posts and waits under the
 * session's send queue lock.
 */
final class GrantBinder {
  private static final Logger LOG = LoggerFactory.getLogger(GrantBinder.class);

  /**
   * The least a shared thread waits for a BIND_MW or LOCAL_INV to complete before the session's
   * queue pair is failed ({@link #await}): a tenth of the host's request timeout, at least this, at
   * most the request timeout.
   */
  static final Duration SCOPING_WAIT = Duration.ofMillis(500);

  private final HostSession s;
  private final HostContext ctx;

  /**
   * The work-request id of the last BIND or LOCAL_INV (guarded by the session's send queue lock):
   * each gets its own, so a completion that arrives after its wait timed out is never taken for a
   * later one's.
   */
  private long lastWrId;

  /**
   * Whether a scoping operation of this session outlasted {@link #scopingWait} (guarded by the
   * session's send queue lock): charged to the peer's address once.
   */
  private boolean stalled;

  GrantBinder(HostSession session) {
    this.s = session;
    this.ctx = session.ctx;
  }

  /** How long {@link #await} waits with a request timeout of {@code requestTimeout}. */
  static Duration scopingWait(Duration requestTimeout) {
    Duration tenth = requestTimeout.dividedBy(10);
    Duration wait = tenth.compareTo(SCOPING_WAIT) > 0 ? tenth : SCOPING_WAIT;
    return wait.compareTo(requestTimeout) < 0 ? wait : requestTimeout;
  }

  /**
   * Scopes grant {@code id} (in {@code slot}) on the device: exactly {@code live}'s range and
   * rights of {@code hosted}.
   *
   * @throws VerbsException when the device could not (no window left, the bind failed)
   */
  HostGrant bind(long id, int slot, LiveGrant live, HostedRegion hosted) {
    int rights =
        (live.operations().contains(Operation.READ) ? AccessFlags.REMOTE_READ : 0)
            | (live.operations().contains(Operation.WRITE) ? AccessFlags.REMOTE_WRITE : 0);
    if (ctx.scopedByRegion()) {
      ByteBuffer slice = hosted.memory().slice((int) live.offset(), (int) live.length());
      MemoryRegion mr = s.domain.pd.registerMemory(slice, AccessFlags.LOCAL_WRITE | rights);
      return new HostGrant(id, slot, live, hosted, s, null, mr, mr.address(), mr.rkey());
    }
    MemoryWindow window = s.domain.pd.allocateMemoryWindow();
    long address = hosted.registration().address() + live.offset();
    try {
      WcStatus status;
      SessionSendQueue sq = s.sendQueue;
      sq.lock();
      try {
        long wrId = ++lastWrId;
        s.qp.postSend(
            new SendWorkRequest(1)
                .wrId(wrId)
                .bind(window, hosted.registration(), address, live.length(), rights));
        status = await(sq, wrId);
      } finally {
        sq.unlock();
      }
      if (status != WcStatus.SUCCESS) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT, "bind_mw", "bind completed with " + status);
      }
    } catch (RuntimeException e) {
      window.close();
      throw e;
    }
    return new HostGrant(id, slot, live, hosted, s, window, null, address, window.rkey());
  }

  /**
   * Ends grant {@code g}'s scope: its window invalidated (LOCAL_INV, unless the queue pair failed:
   * it refuses every access then) and closed, or its region deregistered. The RNIC refuses any
   * access through its R_Key once this returns.
   */
  void invalidate(HostGrant g) {
    if (g.window == null) {
      g.scopedRegion.close();
      return;
    }
    SessionSendQueue sq = s.sendQueue;
    sq.lock();
    try {
      if (!s.qpFailed) {
        long wrId = ++lastWrId;
        s.qp.postSend(new SendWorkRequest(1).wrId(wrId).localInvalidate(g.rkey));
        await(sq, wrId);
      }
    } catch (VerbsException e) {
      LOG.debug("LOCAL_INV of grant {}: {}", g.id, e.getMessage());
    } finally {
      g.window.close();
      sq.unlock();
    }
  }

  /** Frees the device object of a grant that was never issued: its R_Key was never sent. */
  static void discard(HostGrant g) {
    if (g.window != null) {
      g.window.close();
    } else {
      g.scopedRegion.close();
    }
  }

  /**
   * Waits for the completion of BIND_MW or LOCAL_INV {@code wrId} (send queue lock held) on a
   * shared thread: a worker (bind) or the watchdog (expiry). An RC send queue completes in order,
   * so the completion comes only after the session's credit writes posted before it, which the peer
   * acknowledges: a hostile soft stack that never does would hold the thread until the transport's
   * retries run out (4 s), and with it every other tenant's control frames or grant expiries. Past
   * {@link #scopingWait} the session's queue pair is failed instead, which completes everything on
   * it now (flushed) and ends the session; the RNIC then refuses any access through it.
   *
   * @return the completion's status; null or a flush when the queue pair had to be failed
   */
  private WcStatus await(SessionSendQueue sq, long wrId) {
    Duration limit = ctx.options().requestTimeout();
    Duration wait = scopingWait(limit);
    WcStatus status = sq.await(wrId, wait);
    if (status != null) {
      return status;
    }
    LOG.info(
        "session {} of {}: a BIND_MW or LOCAL_INV did not complete within {} (the peer does not"
            + " acknowledge its receive credits?): failing its queue pair",
        s.hexId,
        s.identity,
        wait);
    s.qp.toError();
    if (!stalled) {
      stalled = true;
      // the session ends for it, having held a shared thread for the wait: a failure of the
      // peer's address, as an end for rejected records is, so a peer that reconnects to stall
      // again is refused at accept after authFailuresPerMinute of them
      ctx.limiter().failed(s.remote);
      s.violation("a BIND_MW or LOCAL_INV did not complete within " + wait + ": queue pair failed");
    }
    WcStatus flushed = sq.await(wrId, limit);
    return flushed == WcStatus.SUCCESS ? WcStatus.WR_FLUSH_ERR : flushed;
  }
}
