package io.srdma.host;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.protocol.RevokeReason;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import io.srdma.policy.AuditTrail;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One peer's session on the host, from accept to its end: its state and its lifecycle. The jobs are
 * done by its parts: {@link SessionHandshake} (authentication, HELLO/KEY exchange, queue pair),
 * {@link ControlDispatch} (one control frame at a time), {@link GrantScoper} (issuing and ending
 * grants) and {@link RecordReceiver} (opening records, on the session's {@link OpenerThread}). Its
 * own thread runs {@link #run}; {@link #endByHost}, {@link #terminate}, {@link #closeConnection}
 * and the accessors are thread-safe.
 */
final class HostSession implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(HostSession.class);
  static final int SLOTS = GrantSlots.SLOTS;

  final HostContext ctx;
  final Socket raw;
  final InetAddress remote;
  final AuditTrail audit;
  final AtomicReference<SessionEnd> ending = new AtomicReference<>();
  final AtomicBoolean ended = new AtomicBoolean();
  final RejectionBudget rejections;
  final GrantSlots slots = new GrantSlots();
  final GrantScoper grants;
  private final AtomicBoolean watchdogClosed = new AtomicBoolean();

  // written by the session's thread during the handshake (SessionHandshake), read by others
  volatile SSLSocket socket;
  volatile long deadlineNanos;
  volatile long establishedNanos;
  volatile X509Certificate certificate;
  volatile WatchedOutputStream output;
  volatile boolean qpFailed;
  volatile String identity;
  volatile String tenant;
  volatile String hexId = "-";
  volatile Instant since;
  volatile ControlProxy proxy;
  volatile QueuePair qp;
  volatile KeySchedule schedule;
  volatile RecordReceiver receiver;

  // the session's thread only
  String refusalDetail;
  HostTables.TenantDomain domain;
  CompletionQueue sendCq;
  OpenerThread opener;
  boolean quotaHeld;
  AuthenticatedPeer peer;

  HostSession(HostContext ctx, Socket raw) {
    this.ctx = ctx;
    this.raw = raw;
    this.remote = raw.getInetAddress();
    this.audit = ctx.audit();
    this.rejections = new RejectionBudget(ctx.options().maxRejectedRecords());
    this.deadlineNanos = System.nanoTime() + ctx.options().handshakeTimeout().toNanos();
    this.grants = new GrantScoper(this);
  }

  /** The peer's certificate once authenticated, else null (watched for revocation and expiry). */
  X509Certificate certificate() {
    return certificate;
  }

  /** When the session handshake must be done ({@link System#nanoTime}); 0 once established. */
  long deadlineNanos() {
    return deadlineNanos;
  }

  /** When the session was established ({@link System#nanoTime}); meaningful once established. */
  long establishedNanos() {
    return establishedNanos;
  }

  /**
   * {@link System#nanoTime} since which a control-frame write has been blocked (the peer does not
   * read), or 0.
   */
  long writeBlockedSince() {
    WatchedOutputStream w = output;
    return w == null ? 0 : w.blockedSince();
  }

  /** Why the host is ending this session, or null. */
  SessionEnd ending() {
    return ending.get();
  }

  String identity() {
    return identity;
  }

  String tenant() {
    return tenant;
  }

  String hexId() {
    return hexId;
  }

  @Override
  public void run() {
    String why = "closed by the peer";
    try {
      SessionHandshake handshake = new SessionHandshake(this);
      if (!handshake.authenticate()) {
        return;
      }
      FrameReader reader = handshake.establish();
      socket.setSoTimeout((int) ctx.options().idleTimeout().toMillis());
      why = serve(reader, new ControlDispatch(this));
    } catch (ProtocolException e) {
      why = "protocol violation: " + e.getMessage();
      ctx.counters().protocolErrors.increment();
      refuse(e);
    } catch (KeyExchangeException e) {
      why = "key exchange failed: " + e.reason();
      sendError(ErrorCode.KEY_CONFIRMATION_FAILED, "key confirmation failed");
      violation(why);
    } catch (SocketTimeoutException e) {
      why = "idle or handshake deadline passed";
      sendError(ErrorCode.TIMEOUT, "no frame within the deadline");
    } catch (IOException e) {
      SessionEnd because = ending.get();
      why =
          because != null
              ? "ended by the host: " + because.token()
              : ended.get()
                  ? "ended by the host"
                  : "connection lost: " + e.getClass().getSimpleName();
    } catch (VerbsException e) {
      why = "verbs failure: " + e.getMessage();
      LOG.warn("session {} of {}: {}", hexId, identity, e.getMessage());
      sendError(ErrorCode.INTERNAL_ERROR, "queue pair set-up failed");
    } catch (RuntimeException e) {
      why = "internal error: " + e;
      LOG.error("session {} of {} failed", hexId, identity, e);
      sendError(ErrorCode.INTERNAL_ERROR, "internal error");
    } finally {
      end(why);
    }
  }

  /**
   * The blocking read loop of the control connection: one frame at a time to {@code dispatch},
   * which never reads itself (so an event loop can drive it instead).
   */
  private String serve(FrameReader reader, ControlDispatch dispatch) throws IOException {
    while (!ended.get()) {
      String why = dispatch.onFrame(next(reader));
      if (why != null) {
        return why;
      }
    }
    return "ended by the host";
  }

  /**
   * Ends this session on the host's decision (thread-safe, any thread; returns at once): from now
   * on nothing more of it is opened; on the host's watchdog thread its grants are revoked (each
   * window invalidated first), the end is audited once with {@code why}'s token, and the connection
   * is closed. Only the first call for a session has an effect.
   *
   * @return false when the session was already ending
   */
  boolean endByHost(SessionEnd why) {
    if (ended.get() || !ending.compareAndSet(null, why)) {
      return false;
    }
    try {
      ctx.watchdog().execute(() -> finishEndByHost(why));
    } catch (RejectedExecutionException e) {
      closeConnection(); // the host is closing: its close() ends the session anyway
    }
    return true;
  }

  private void finishEndByHost(SessionEnd why) {
    ctx.counters().sessionsTerminated.increment();
    LOG.info("ending session {} of {}: {}", hexId, identity, why.token());
    // grants first, so the RNIC refuses the peer before anything else happens
    for (HostGrant g : slots.liveGrants()) {
      grants.end(g, RevokeReason.SESSION_ENDING, AuditTrail.SYSTEM, false, 0);
    }
    if (why == SessionEnd.REJECTED_RECORDS) {
      // counts as a failure of the address: a peer that reconnects to flood again is refused
      // after authFailuresPerMinute such ends, so audit lines stay bounded across sessions too
      ctx.limiter().failed(remote);
      audit.accessViolation(identity, tenant, null, 0, rejections.count(), why.token());
    } else {
      audit.peerAuthenticated(identity, tenant, false, why.token());
    }
    // No ERROR frame: a peer that does not read could block this shared thread on a full socket.
    closeConnection();
  }

  /** Closes a connection whose handshake deadline passed (watchdog); true the first time only. */
  boolean closeForDeadline() {
    if (!watchdogClosed.compareAndSet(false, true)) {
      return false;
    }
    LOG.debug("closing connection from {}: handshake deadline passed", remote);
    closeConnection();
    return true;
  }

  /** Closes a connection whose peer stopped reading (watchdog); true the first time only. */
  boolean closeForStuckWrite() {
    if (!watchdogClosed.compareAndSet(false, true)) {
      return false;
    }
    LOG.info("closing session {} of {}: the peer stopped reading", hexId, identity);
    closeConnection();
    return true;
  }

  /** Closes the connection under the TLS layer: never blocks, wakes the session's thread. */
  void closeConnection() {
    try {
      raw.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  void violation(String why) {
    audit.accessViolation(identity, tenant, null, 0, 0, why);
  }

  private void refuse(ProtocolException e) {
    violation(
        "protocol violation: "
            + e.reason()
            + (refusalDetail == null ? "" : " (" + refusalDetail + ")"));
    ControlProxy p = proxy;
    if (p != null) {
      try {
        p.error(e);
      } catch (IOException ignored) {
        // the peer is gone; the session ends anyway
      }
    }
  }

  void sendError(ErrorCode code, String text) {
    ControlProxy p = proxy;
    if (p != null) {
      try {
        p.error(0, code, text);
      } catch (IOException ignored) {
        // the peer is gone; the session ends anyway
      }
    }
  }

  /** Ends the session from another thread: closes the connection; run() then cleans up. */
  void terminate(String why) {
    if (!ended.get()) {
      LOG.info("ending session {} of {}: {}", hexId, identity, why);
      sendError(ErrorCode.SHUTTING_DOWN, why);
      SSLSocket tls = socket;
      try {
        if (tls != null) {
          tls.close();
        }
      } catch (IOException ignored) {
        // closing anyway
      }
      closeConnection();
    }
  }

  private void end(String why) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    QueuePair q = qp;
    if (q != null) {
      if (ending.get() == null) {
        // records the peer wrote before its CLOSE may still sit in the receive queue: open them
        opener.drain(ctx.options().requestTimeout());
      }
      opener.detach(q.qpn());
    }
    for (HostGrant g : slots.liveGrants()) {
      grants.end(g, RevokeReason.SESSION_ENDING, AuditTrail.SYSTEM, false, 0);
    }
    SSLSocket tls = socket;
    ControlProxy p = proxy;
    if (p != null && tls != null && !tls.isClosed()) {
      try {
        p.close(0);
      } catch (IOException ignored) {
        // gone already
      }
    }
    try {
      if (tls != null) {
        tls.close();
      }
    } catch (IOException ignored) {
      // closing anyway
    }
    closeConnection();
    if (q != null) {
      q.close();
    }
    if (opener != null) {
      ctx.openers().release(opener); // after its queue pair closed: nothing more reports to it
    }
    if (sendCq != null) {
      sendCq.close();
    }
    if (schedule != null) {
      schedule.close();
    }
    if (quotaHeld) {
      ctx.tables().releaseSession(tenant);
    }
    ctx.tables().sessionEnded(this);
    if (since != null) {
      LOG.info("session {} of {} ended: {}", hexId, identity, why);
    }
  }

  boolean isEstablished() {
    return since != null && !ended.get();
  }

  /** Grants live now. */
  List<HostGrant> liveGrants() {
    return slots.liveGrants();
  }

  SessionInfo info() {
    KeySchedule s = schedule;
    RecordReceiver r = receiver;
    return new SessionInfo(
        hexId,
        identity,
        tenant,
        since,
        s == null ? 0 : s.epoch(),
        r == null ? 0 : r.recordsIn(),
        r == null ? 0 : r.bytesIn(),
        slots.liveGrants().size());
  }

  /**
   * The next frame; a connection the peer closed between frames is an {@link java.io.EOFException}.
   */
  static Frame next(FrameReader reader) throws IOException {
    Frame f = reader.read();
    if (f == null) {
      throw new java.io.EOFException("the peer closed the connection");
    }
    return f;
  }
}
