package io.srdma.host;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.protocol.RevokeReason;
import io.srdma.channel.transport.EventLoop;
import io.srdma.channel.transport.TlsConnection;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.MutualTls;
import io.srdma.policy.AuditTrail;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One peer's session on the host, from accept to its end: its state and its lifecycle, without a
 * thread of its own. Its {@link TlsConnection} (TLS on the host's event loops) tells it of progress
 * through {@link #kick}; the session then handles what is ready on its strand, a run on one of the
 * host's workers, never two at once, in order. The jobs are done by its parts: {@link
 * SessionHandshake} (authentication, HELLO/KEY exchange, queue pair; its connect runs on the host's
 * {@link QueuePairConnector}, which resumes the strand when it ended), {@link ControlDispatch} (one
 * control frame at a time), {@link GrantScoper} (issuing and ending grants) and {@link
 * RecordReceiver} (opening records, on the session's {@link OpenerThread}). {@link #kick}, {@link
 * #endByHost}, {@link #terminate}, {@link #closeConnection}, {@link #awaitEnd} and the accessors
 * are thread-safe.
 */
final class HostSession {
  private static final Logger LOG = LoggerFactory.getLogger(HostSession.class);
  static final int SLOTS = GrantSlots.SLOTS;
  private static final String REFUSED = "refused before authentication";

  /** Where the session is; the strand's only. */
  private enum Phase {
    TLS,
    HELLO,
    KEY_CONFIRM,
    /** KEY_CONFIRM checked; the queue pair's connect runs on the connector, frames wait. */
    CONNECTING,
    ESTABLISHED
  }

  final HostContext ctx;
  final InetAddress remote;
  final AuditTrail audit;
  final AtomicReference<SessionEnd> ending = new AtomicReference<>();
  final AtomicBoolean ended = new AtomicBoolean();
  final RejectionBudget rejections;
  final GrantSlots slots = new GrantSlots();
  final GrantScoper grants;
  private final TlsConnection connection;
  private final long acceptedNanos = System.nanoTime();
  // the deadlines before authentication, from accept: before and after the first byte
  private final long firstRecordDeadline;
  private final long tlsDeadline;
  private final AtomicBoolean watchdogClosed = new AtomicBoolean();
  private final AtomicInteger kicks = new AtomicInteger();
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile boolean timedOut;
  private volatile boolean preAuth = true; // until authenticated: the watchdog's deadlines
  // the watchdog closed this connection at its deadline while the TLS handshake waited for the
  // host (delegated tasks queued or running, the strand not run yet): not the peer's fault
  private volatile boolean hostBehind;
  private volatile QueuePairConnector.Connect connect; // while the queue pair connects
  private volatile long lastFrameNanos;

  // written on the strand during the handshake (SessionHandshake), read by others
  private volatile long deadlineNanos; // once authenticated
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

  /** Write notifications seen by the opener (its thread writes, ordered; grant ends read). */
  final java.util.concurrent.atomic.AtomicLong notificationsSeen =
      new java.util.concurrent.atomic.AtomicLong();

  // the strand's only
  private Phase phase = Phase.TLS;
  private String endAfterConnect; // why the session ends, once its running connect returned
  private boolean preAuthHeld = true;
  private SessionHandshake handshake;
  private ControlDispatch dispatch;
  String refusalDetail;
  HostTables.TenantDomain domain;
  CompletionQueue sendCq;
  volatile SessionSendQueue sendQueue;
  ReceiveCredits credits; // null: the client takes none
  OpenerThread opener;
  boolean quotaHeld;
  AuthenticatedPeer peer;

  HostSession(HostContext ctx, SocketChannel channel, InetAddress remote, EventLoop loop)
      throws IOException {
    this.ctx = ctx;
    this.remote = remote;
    this.audit = ctx.audit();
    this.rejections = new RejectionBudget(ctx.options().maxRejectedRecords());
    this.firstRecordDeadline = acceptedNanos + ctx.options().firstRecordTimeout().toNanos();
    this.tlsDeadline = acceptedNanos + ctx.options().handshakeTimeout().toNanos();
    this.grants = new GrantScoper(this);
    int port = ((InetSocketAddress) channel.getRemoteAddress()).getPort();
    SSLEngine engine = ctx.tls().newEngine(remote.getHostAddress(), port);
    this.connection =
        new TlsConnection(
            loop,
            channel,
            engine,
            io.srdma.channel.protocol.Side.CLIENT,
            ctx.workers(),
            this::kick);
  }

  TlsConnection connection() {
    return connection;
  }

  /** The peer's certificate once authenticated, else null (watched for revocation and expiry). */
  X509Certificate certificate() {
    return certificate;
  }

  /**
   * When the handshake must be done ({@link System#nanoTime}); 0 once established. Before
   * authentication it is computed here, on the caller's thread (the watchdog's), from the
   * connection's first byte: {@code firstRecordTimeout} after accept until it arrived, then {@code
   * handshakeTimeout} after accept, whether or not a worker has run the strand since.
   */
  long deadlineNanos() {
    if (preAuth) {
      return connection.firstByte() < 0 ? firstRecordDeadline : tlsDeadline;
    }
    return deadlineNanos;
  }

  /**
   * The peer's certificate is verified: the session handshake (HELLO … KEY_CONFIRM) must end within
   * {@code handshakeTimeout} from now (strand).
   */
  void authenticated(X509Certificate cert) {
    deadlineNanos = System.nanoTime() + ctx.options().handshakeTimeout().toNanos();
    certificate = cert;
    preAuth = false; // after both: the watchdog that reads false sees them
  }

  /** The session is established: no handshake deadline any more (strand). */
  void established() {
    deadlineNanos = 0;
  }

  /** When the session was established ({@link System#nanoTime}); meaningful once established. */
  long establishedNanos() {
    return establishedNanos;
  }

  /** When the last control frame arrived ({@link System#nanoTime}); meaningful once established. */
  long lastFrameNanos() {
    return lastFrameNanos;
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

  /** Something is ready (bytes, a finished handshake, a close): run the strand (any thread). */
  void kick() {
    if (kicks.getAndIncrement() != 0) {
      return; // the strand runs and will look again
    }
    try {
      ctx.workers().execute(this::drain);
    } catch (RejectedExecutionException e) {
      drain(); // the host is closing: finish here
    }
  }

  private void drain() {
    int seen = kicks.get();
    while (true) {
      step();
      if (kicks.compareAndSet(seen, 0)) {
        return;
      }
      seen = kicks.get();
    }
  }

  /** Handles what is ready now; ends the session on any failure (strand). */
  private void step() {
    if (ended.get()) {
      return;
    }
    if (endAfterConnect != null) {
      if (connect.finished()) {
        end(endAfterConnect);
      }
      return; // the connect was cancelled: its end runs the strand again
    }
    String why;
    try {
      why = advance();
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
    }
    if (why != null) {
      QueuePairConnector.Connect c = connect;
      if (c != null && !c.finished()) {
        // the queue pair is closed only once readyToSend returned (ibv: never under a running
        // modify_qp); cancelled, it returns at once
        endAfterConnect = why;
        c.cancel();
        return;
      }
      end(why);
    }
  }

  /**
   * Moves the session as far as what arrived allows.
   *
   * @return null to wait for more, else why the session ends
   */
  private String advance() throws IOException {
    if (phase == Phase.TLS) {
      if (!connection.handshakeFinished()) {
        return beforeAuthentication();
      }
      handshake = new SessionHandshake(this);
      boolean admitted;
      try {
        admitted = handshake.authenticate(connection.engine());
      } finally {
        releasePreAuth();
      }
      if (!admitted) {
        return REFUSED;
      }
      lastFrameNanos = System.nanoTime();
      phase = Phase.HELLO;
    }
    if (phase == Phase.CONNECTING) {
      connected();
    }
    Frame f;
    // while connecting, frames wait in the connection (bounded: it stops reading from the socket)
    while (!ended.get() && phase != Phase.CONNECTING && (f = connection.nextFrame()) != null) {
      lastFrameNanos = System.nanoTime();
      switch (phase) {
        case HELLO -> {
          inTime(); // frames buffered while the strand waited for a worker are not served late
          handshake.hello(f);
          phase = Phase.KEY_CONFIRM;
        }
        case KEY_CONFIRM -> {
          inTime();
          if (handshake.creditWord(f)) {
            continue; // where the client takes receive credits; its KEY_CONFIRM comes next
          }
          handshake.confirm(f);
          phase = Phase.CONNECTING;
          // the connect waits for the responder the peer named: never on a worker
          connect = ctx.connector().connect(tenant, qp, deadlineNanos, this::kick);
        }
        default -> {
          String why = dispatch.onFrame(f);
          if (why != null) {
            return why;
          }
        }
      }
    }
    if (timedOut) {
      throw new SocketTimeoutException("no frame within the deadline");
    }
    if (connection.isClosed()) {
      IOException failure = connection.failure();
      throw failure != null ? failure : new java.io.EOFException("connection closed");
    }
    return null;
  }

  /** The session handshake's deadline passed: it ends (TIMEOUT) instead of going on (strand). */
  private void inTime() throws SocketTimeoutException {
    if (timedOut || System.nanoTime() - deadlineNanos > 0) {
      throw new SocketTimeoutException("session handshake deadline passed");
    }
  }

  /**
   * The queue pair's connect ended: established, or the connect's failure is thrown; does nothing
   * while it runs (strand).
   */
  private void connected() throws IOException {
    QueuePairConnector.Connect c = connect;
    if (!c.finished()) {
      return;
    }
    connect = null;
    inTime(); // cancelled at the deadline, or connected just after it: TIMEOUT either way
    RuntimeException failure = c.failure();
    if (failure != null) {
      throw failure;
    }
    handshake.established();
    handshake = null;
    dispatch = new ControlDispatch(this);
    phase = Phase.ESTABLISHED;
  }

  /**
   * Before the TLS handshake finished: a first byte that is not TLS, an idle connection past the
   * first-record deadline and a failed handshake are refused and counted against the address; a
   * connection the peer closed without a byte is charged the share of the first-record deadline it
   * held (a TCP health check that closes at once next to nothing).
   */
  private String beforeAuthentication() {
    int first = connection.firstByte();
    if (first >= 0 && first != TlsConnection.HANDSHAKE_RECORD) {
      releasePreAuth();
      ctx.counters().authFailures.increment();
      ctx.limiter().failed(remote);
      return REFUSED;
    }
    if (!connection.isClosed()) {
      return null; // (the first byte moved the deadline: deadlineNanos)
    }
    releasePreAuth();
    if (first < 0) {
      if (watchdogClosed.get()) {
        ctx.limiter().failed(remote); // idle: the watchdog counted the deadline
      } else {
        // closed by the peer without a byte: the slot time it held is charged, so closing just
        // before the deadline and reconnecting does not hold the address's slots for free
        long timeout = ctx.options().firstRecordTimeout().toNanos();
        ctx.limiter().heldSilently(remote, System.nanoTime() - acceptedNanos, timeout);
      }
      return REFUSED;
    }
    if (watchdogClosed.get() && hostBehind) {
      // the host was the slow party (its workers busy): the peer did its part in time
      LOG.info(
          "{}: closed a TLS handshake from {} at its deadline while it waited for the host's"
              + " workers; not counted against the address",
          ctx.name(),
          remote.getHostAddress());
      return REFUSED;
    }
    IOException cause = connection.failure();
    KeyExchangeException e =
        MutualTls.failure(
            cause != null ? cause : new java.net.SocketException("handshake deadline passed"));
    ctx.counters().authFailures.increment();
    ctx.limiter().failed(remote);
    audit.peerAuthenticated(null, null, false, e.reason() + " from " + remote.getHostAddress());
    return REFUSED;
  }

  private void releasePreAuth() {
    if (preAuthHeld) {
      preAuthHeld = false;
      ctx.handshakes().release(remote);
    }
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
    if (certificate != null) {
      timedOut = true; // authenticated: the strand tells the peer (TIMEOUT) and ends the session
      QueuePairConnector.Connect c = connect;
      if (c != null) {
        c.cancel(); // a connect waiting for the peer's responder ends now, not at its own timeout
      }
      kick();
      return true;
    }
    hostBehind = connection.tasksPending() || kicks.get() != 0;
    LOG.debug("closing connection from {}: handshake deadline passed", remote);
    closeConnection();
    return true;
  }

  /** An established session whose peer sent nothing for the idle timeout (watchdog). */
  boolean endForIdle() {
    if (timedOut || ended.get()) {
      return false;
    }
    timedOut = true;
    kick();
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

  /** Closes the connection under the TLS layer: never blocks, runs the session's strand. */
  void closeConnection() {
    connection.close();
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
      closeConnection();
    }
  }

  private void end(String why) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    QueuePair q = qp;
    if (q != null) {
      if (ending.get() == null && since != null) {
        // records the peer wrote before its CLOSE may still sit in the receive queue: open them
        // (a session never established had no grant, so nothing to open: no wait on the worker)
        opener.drain(ctx.options().requestTimeout());
      }
      opener.detach(q.qpn());
    }
    for (HostGrant g : slots.liveGrants()) {
      grants.end(g, RevokeReason.SESSION_ENDING, AuditTrail.SYSTEM, false, 0);
    }
    releasePreAuth();
    ControlProxy p = proxy;
    if (p != null && !connection.isClosed() && connection.handshakeFinished()) {
      try {
        p.close(0);
      } catch (IOException ignored) {
        // gone already
      }
    }
    connection.closeGracefully();
    if (q != null) {
      q.close();
    }
    if (opener != null) {
      ctx.openers().release(opener); // after its queue pair closed: nothing more reports to it
    }
    if (credits != null) {
      credits.close(); // after its queue pair closed: no credit write reads it any more
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
    done.countDown();
  }

  /** Waits (bounded) until the session ended and freed what it held; false on timeout. */
  boolean awaitEnd(long timeout, java.util.concurrent.TimeUnit unit) throws InterruptedException {
    return done.await(timeout, unit);
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
}
