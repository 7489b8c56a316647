package io.srdma.channel;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.GrantFlyweight;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.protocol.RevokeReason;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RegionKeyring;
import java.io.IOException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's control channel after the handshake: requests with deadlines (GRANT, RELEASE, PING),
 * the frames the host sends on its own (REVOKE, REGION_KEY, REKEY acknowledgements, ERROR, CLOSE),
 * keep-alive, the periodic re-check of the host's certificate, and the end of the session. No
 * thread of its own: the host's frames are handled on the connection's strand and the timer's work
 * (keep-alive, deadlines, re-checks) on the process's {@link ClientRuntime}, whose timer only
 * starts what may block (a write to the host, a listener) on a worker. Thread-safe.
 */
final class ControlChannel {
  private static final Logger LOG = LoggerFactory.getLogger(ControlChannel.class);

  /** How long a connection whose write failed may stay open for the host's last frames. */
  static final Duration WRITE_FAILURE_GRACE = Duration.ofMillis(250);

  /**
   * The most grants a session holds at once. The host issues at most 255 live grants per session
   * (one per slot, docs/protocol.md); twice that leaves room for grants that ended on the host
   * whose REVOKE is still on its way, so only a host that breaks its own limit reaches it.
   */
  static final int MAX_GRANTS = 512;

  /** The kinds of request this client sends; each accepts only its own answers. */
  enum Kind {
    /** Answered by GRANT or GRANT_DENIED. */
    GRANT_REQUEST,
    /** Answered by REVOKE (reason RELEASED) of the released grant. */
    RELEASE,
    /** Answered by PONG. */
    PING
  }

  /** What a GRANT_REQUEST asked for: its GRANT must lie within it. */
  private record Asked(String region, int operations, long offset, long length) {}

  /**
   * A request waiting for its answer: its kind, who waits, what a GRANT_REQUEST asked for (else
   * null) and the grant a RELEASE names (else 0).
   */
  private record Pending(Kind kind, CompletableFuture<Object> future, Asked asked, long released) {}

  private final ClientOptions options;
  private final SessionState state;
  private final ClientConnection connection;
  private final ClientRuntime runtime;
  private final ControlProxy proxy;
  private final String tenant;
  private final String sessionId;
  private final HostRecheck recheck;
  private final SealedWriter writer;
  private final WriteStages stages;
  private final SealedReader dataReader;
  private final KeyEpochs epochs;
  private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
  private final Map<Long, RemoteGrant> grants = new ConcurrentHashMap<>();
  private final AtomicInteger requestIds;
  private final AtomicReference<IOException> writeFailure = new AtomicReference<>();
  private final ScheduledThreadPoolExecutor timer;
  private volatile ScheduledFuture<?> keepaliveTask;
  private volatile ScheduledFuture<?> recheckTask;
  private volatile BiConsumer<RemoteGrant, String> revokedListener = (g, r) -> {};
  // the application's listeners (revocations, then the session's loss), run in the host's order on
  // a listener thread, never on the strand or a worker: a listener that asks for a new grant or
  // connects again waits for frames only the strand (a worker) can read
  private final ConcurrentLinkedQueue<Runnable> notices = new ConcurrentLinkedQueue<>();
  private final AtomicInteger noticesQueued = new AtomicInteger();
  private volatile Consumer<ChannelException> lostListener = e -> {};

  ControlChannel(
      ClientOptions options,
      SessionState state,
      ClientConnection connection,
      ClientRuntime runtime,
      ControlProxy proxy,
      AtomicInteger requestIds,
      String tenant,
      String sessionId,
      X509Certificate hostCertificate,
      SealedWriter writer,
      WriteStages stages,
      SealedReader dataReader,
      KeyEpochs epochs) {
    this.options = options;
    this.state = state;
    this.connection = connection;
    this.runtime = runtime;
    this.proxy = proxy;
    this.requestIds = requestIds;
    this.tenant = tenant;
    this.sessionId = sessionId;
    // the check runs on the timer; ending the session (listeners) on a worker
    this.recheck =
        new HostRecheck(
            options.trust(), hostCertificate, state, c -> runtime.execute(() -> fail(c, true)));
    this.writer = writer;
    this.stages = stages;
    this.dataReader = dataReader;
    this.epochs = epochs;
    this.timer = runtime.timer();
  }

  /** Starts handling the host's frames, keep-alive and the host certificate re-check. */
  void start() {
    connection.startStrand(this::readControl);
    long keepalive = options.keepalive().toMillis();
    // runs until close() cancels it; keepalive() handles its own failures
    keepaliveTask =
        timer.scheduleAtFixedRate(
            () -> runtime.execute(this::keepalive), keepalive, keepalive, TimeUnit.MILLISECONDS);
    // the host's certificate can be revoked or expire during the session: the session then ends
    recheckTask =
        timer.scheduleAtFixedRate(
            recheck::run,
            HostRecheck.INTERVAL.toMillis(),
            HostRecheck.INTERVAL.toMillis(),
            TimeUnit.MILLISECONDS);
  }

  void onRevoked(BiConsumer<RemoteGrant, String> listener) {
    revokedListener = listener;
  }

  void onSessionLost(Consumer<ChannelException> listener) {
    lostListener = listener;
  }

  /** Deadline of a blocking call: twice the request timeout. */
  Duration timeout() {
    return options.requestTimeout().multipliedBy(2);
  }

  /** Tells the host the session ends (best effort), ends it, and stops its periodic work. */
  void close(ChannelException closing) {
    if (state.lost() == null) {
      try {
        proxy.close(0);
      } catch (IOException e) {
        LOG.debug("{}: CLOSE not sent: {}", state.name, e.getMessage());
      }
    }
    fail(closing, false);
    connection.close();
    cancel(keepaliveTask);
    cancel(recheckTask);
  }

  private static void cancel(ScheduledFuture<?> task) {
    if (task != null) {
      task.cancel(false);
    }
  }

  // ---------------------------------------------------------------- requests

  private interface Sender {
    void send(int requestId) throws IOException;
  }

  private int nextRequestId() {
    int id = requestIds.getAndIncrement();
    if (id == 0) {
      id = requestIds.getAndIncrement();
    }
    return id & Integer.MAX_VALUE;
  }

  CompletableFuture<Object> request(Kind kind, Asked asked, long released, Sender sender) {
    if (!state.isOpen()) {
      return CompletableFuture.failedFuture(state.unusable()); // names why the session was lost
    }
    int id = nextRequestId();
    CompletableFuture<Object> f = new CompletableFuture<>();
    Pending p = new Pending(kind, f, asked, released);
    pending.put(id, p);
    try {
      sender.send(id);
    } catch (IOException e) {
      writeFailed(e); // f stays pending: the session's end answers it, with the host's reason
    }
    if (!state.isOpen() && pending.remove(id, p)) {
      // the session ended meanwhile, perhaps before f was pending: fail() did not see it
      f.completeExceptionally(state.unusable());
      return f;
    }
    long ms = options.requestTimeout().toMillis();
    try {
      // the deadline fails the request (and the session) itself, on a worker (it writes ERROR)
      ScheduledFuture<?> d =
          timer.schedule(
              () -> runtime.execute(() -> deadline(id, p, ms)), ms, TimeUnit.MILLISECONDS);
      f.whenComplete((v, t) -> d.cancel(false)); // answered: the shared timer forgets it
    } catch (RejectedExecutionException e) {
      // closing: fail() answers every pending request
    }
    return f;
  }

  /**
   * A write to the host failed. A host that ends the session with a reason (its shutdown, a
   * deadline, a protocol error) sends ERROR and closes without reading what this client wrote
   * meanwhile, so the write can fail on the reset connection while the host's reason already
   * arrived. The session is not failed here: the strand reads what arrived first and ends it with
   * the host's ERROR, or, once the connection is closed, with this failure. The event loop closes a
   * reset connection when it reads the reset; a connection still open after {@link
   * #WRITE_FAILURE_GRACE} (a failed TLS engine) is closed here, so the session always ends.
   */
  private void writeFailed(IOException e) {
    if (!writeFailure.compareAndSet(null, e) || connection.isClosed()) {
      return; // the strand was kicked when the connection closed
    }
    try {
      var unused =
          timer.schedule(connection::close, WRITE_FAILURE_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      connection.close();
    }
  }

  private void deadline(int id, Pending p, long ms) {
    CompletableFuture<Object> f = p.future();
    if (pending.remove(id, p) && !f.isDone()) {
      ChannelException t =
          new ChannelException(
              ChannelException.Reason.TIMEOUT,
              "no answer to request " + id + " within " + ms + " ms");
      f.completeExceptionally(t);
      try {
        proxy.error(0, ErrorCode.TIMEOUT, "no answer within the deadline");
      } catch (IOException ignored) {
        // ending anyway
      }
      fail(t, true);
    }
  }

  CompletableFuture<RemoteGrant> requestGrant(
      String region, int accessBits, long offset, long length, long ttlMillis) {
    return request(
            Kind.GRANT_REQUEST,
            new Asked(region, accessBits, offset, length),
            0,
            id -> proxy.grantRequest(id, region, accessBits, offset, length, ttlMillis))
        .thenApply(RemoteGrant.class::cast); // only a GRANT completes a GRANT_REQUEST
  }

  /** Completes when the host's REVOKE of {@code g} answers the RELEASE (nothing else does). */
  CompletableFuture<Void> release(RemoteGrant g) {
    return request(Kind.RELEASE, null, g.id(), id -> proxy.release(id, g.id()))
        .thenApply(o -> null);
  }

  private void keepalive() {
    if (state.isOpen()) {
      // an unanswered ping fails the session through the request's deadline
      var unused = request(Kind.PING, null, 0, id -> proxy.ping(id, System.nanoTime()));
    }
  }

  // ---------------------------------------------------------------- frames from the host

  /**
   * Handles the host's frames that arrived (the connection's strand, one run at a time); after the
   * session is lost the rest is ignored.
   */
  private void readControl() {
    try {
      Frame f;
      while (state.lost() == null && !state.isClosed() && (f = connection.nextFrame()) != null) {
        if (!onFrame(f)) {
          return;
        }
      }
      if (state.lost() == null && !state.isClosed() && connection.isClosed()) {
        IOException failure = connection.failure();
        IOException written = writeFailure.get();
        throw failure != null
            ? failure
            : written != null
                ? written
                : new java.io.EOFException("the peer closed the connection");
      }
    } catch (ProtocolException e) {
      try {
        proxy.error(e);
      } catch (IOException ignored) {
        // ending anyway
      }
      fail(
          new ChannelException(
              ChannelException.Reason.PROTOCOL, e.reason().name(), e.getMessage(), e),
          true);
    } catch (IOException | RuntimeException e) {
      fail(
          new ChannelException(
              ChannelException.Reason.SESSION_CLOSED,
              null,
              "control connection lost: " + e.getMessage(),
              e),
          true);
    }
  }

  /** One frame from the host; false when it ends the session. */
  private boolean onFrame(Frame f) throws IOException {
    switch (f.type()) {
      case GRANT -> granted(f.requestId(), f.grant());
      case GRANT_DENIED -> {
        if (answers(f, Kind.GRANT_REQUEST) != null) {
          answerFailure(
              f.requestId(),
              new ChannelException(
                  ChannelException.Reason.GRANT_DENIED,
                  f.grantDenied().reason().name(),
                  f.grantDenied().reason() + ": " + f.grantDenied().text(),
                  null));
        }
      }
      case REVOKE -> revoked(f);
      case REKEY -> epochs.acknowledged(f.rekey().epoch());
      case REGION_KEY -> regionKeyRotated(f);
      case PONG -> {
        if (answers(f, Kind.PING) != null) {
          answer(f.requestId(), true);
        }
      }
      case PING -> {
        try {
          proxy.pong(f.requestId(), f.ping().payload());
        } catch (IOException e) {
          writeFailed(e); // read on: the host's ERROR may be next
        }
      }
      case ERROR -> {
        fail(ClientHandshake.refusal(f), true);
        return false;
      }
      case CLOSE -> {
        fail(
            new ChannelException(ChannelException.Reason.SESSION_CLOSED, "host closed the session"),
            true);
        return false;
      }
      default ->
          throw new ProtocolException(
              ProtocolException.Reason.UNEXPECTED_TYPE, f.type() + " is not expected now");
    }
    return true;
  }

  /**
   * GRANT: taken only as the answer to a pending GRANT_REQUEST, for a grant id the session does not
   * hold yet, and only while it holds fewer than {@link #MAX_GRANTS}; anything else is a protocol
   * error (the session ends, and with it every grant), checked before the grant is built, so a
   * host's unsolicited GRANTs cost this client nothing.
   */
  private void granted(int requestId, GrantFlyweight g) {
    Pending p = pending.get(requestId);
    if (p == null || p.kind() != Kind.GRANT_REQUEST) {
      throw new ProtocolException(
          ProtocolException.Reason.UNEXPECTED_TYPE,
          "GRANT #"
              + requestId
              + " answers no pending grant request"
              + (p == null ? "" : " (request " + requestId + " is a " + p.kind() + ")"));
    }
    if (grants.size() >= MAX_GRANTS) {
      throw new ProtocolException(
          ProtocolException.Reason.UNEXPECTED_TYPE,
          "GRANT #" + requestId + " past the " + MAX_GRANTS + " grants a session may hold");
    }
    withinRequest(requestId, p.asked(), g);
    if (grants.containsKey(g.grantId())) {
      // overwriting it would leave the held grant live after the REVOKE that names its id
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE,
          "GRANT #"
              + requestId
              + " names grant "
              + g.grantId()
              + ", which this session already holds");
    }
    RemoteGrant grant = grantFrom(g);
    if (!pending.remove(requestId, p)) {
      grant.end("SESSION_CLOSED"); // its deadline passed meanwhile: the session is ending
      return;
    }
    grants.put(grant.id(), grant);
    if (state.lost() != null && grants.remove(grant.id(), grant)) {
      grant.end("SESSION_CLOSED"); // lost meanwhile: fail() may have ended the grants before it
    }
    p.future().complete(grant);
  }

  /** A GRANT gives at most what its request asked: the region, operations and range. */
  private static void withinRequest(int requestId, Asked asked, GrantFlyweight g) {
    String wrong = null;
    if (!asked.region().equals(g.region())) {
      wrong = "another region than the request's";
    } else if ((g.operations() & ~asked.operations()) != 0) {
      wrong =
          "operations 0x"
              + Integer.toHexString(g.operations())
              + ", more than the requested 0x"
              + Integer.toHexString(asked.operations());
    } else if (g.offset() < asked.offset()
        || g.length() > asked.offset() + asked.length() - g.offset()) {
      wrong =
          "["
              + g.offset()
              + ", +"
              + g.length()
              + "), outside the requested ["
              + asked.offset()
              + ", +"
              + asked.length()
              + ")";
    }
    if (wrong != null) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE, "GRANT #" + requestId + " grants " + wrong);
    }
  }

  /**
   * The pending request {@code f} answers, or null when none is pending under its id (its deadline
   * passed: the session is ending anyway). A pending request of another kind than {@code kind} is a
   * protocol error: the answer is not one it accepts.
   */
  private Pending answers(Frame f, Kind kind) {
    Pending p = pending.get(f.requestId());
    if (p != null && p.kind() != kind) {
      throw new ProtocolException(
          ProtocolException.Reason.UNEXPECTED_TYPE,
          f.type() + " #" + f.requestId() + " answers a " + p.kind() + ", not a " + kind);
    }
    return p;
  }

  private RemoteGrant grantFrom(GrantFlyweight g) {
    GrantTarget target =
        new GrantTarget(
            g.grantId(),
            tenant,
            g.region(),
            g.offset(),
            g.length(),
            g.operations(),
            Instant.ofEpochMilli(g.expiryEpochMillis()),
            g.remoteAddress(),
            g.rkey(),
            SealedLayout.writeUnit(g.length()),
            RecordBinding.of(g.grantId(), tenant, g.region()));
    return new RemoteGrant(
        target, writer, stages, dataReader, this, g.regionKey(), options.maxRecordPayload());
  }

  private void answer(int requestId, Object value) {
    Pending p = pending.remove(requestId);
    if (p != null) {
      p.future().complete(value);
    }
  }

  private void answerFailure(int requestId, ChannelException e) {
    Pending p = pending.remove(requestId);
    if (p != null) {
      p.future().completeExceptionally(e);
    }
  }

  /**
   * REGION_KEY: a newer region key for a READ grant this client holds. Only a key installed (newer
   * than the one held) schedules the wipe of the one it replaced, and a grant keeps at most one
   * such wipe pending, so a flood of REGION_KEYs never grows the shared timer's queue.
   */
  private void regionKeyRotated(Frame f) {
    byte[] material = f.regionKey().regionKey();
    RemoteGrant g = grants.get(f.regionKey().grantId());
    if (g == null) {
      Arrays.fill(material, (byte) 0); // the grant ended meanwhile
      return;
    }
    if (!g.regionKeyRotated(f.regionKey().generation(), material)) {
      return; // not newer: the held key stays, nothing to wipe later
    }
    try {
      g.keyExpiryScheduled(
          timer.schedule(
              () -> runtime.execute(g::expireRegionKeys),
              RegionKeyring.GRACE.toMillis() + 100,
              TimeUnit.MILLISECONDS)); // wipes the previous generation's key after its grace
    } catch (RejectedExecutionException e) {
      // closing: every key is wiped by close()
    }
  }

  /**
   * REVOKE: the host ended a grant; with a request id, it answers the RELEASE of that same grant
   * (anything else is a protocol error, checked before any grant ends).
   */
  private void revoked(Frame f) {
    int requestId = f.requestId();
    long grantId = f.revoke().grantId();
    RevokeReason reason = f.revoke().reason();
    if (requestId != 0) {
      Pending p = answers(f, Kind.RELEASE);
      if (p != null && p.released() != grantId) {
        throw new ProtocolException(
            ProtocolException.Reason.BAD_VALUE,
            "REVOKE #"
                + requestId
                + " names grant "
                + grantId
                + ", not the released grant "
                + p.released());
      }
    }
    RemoteGrant g = grants.remove(grantId);
    if (g != null) {
      g.end(reason.name());
      BiConsumer<RemoteGrant, String> listener = revokedListener;
      notice(() -> listener.accept(g, reason.name()));
    }
    if (requestId != 0) {
      answer(requestId, true);
    }
  }

  /**
   * Runs {@code n} on a listener thread after the notices queued before it, one at a time (so the
   * application hears of revocations, and of the session's loss, in the host's order), and never on
   * the strand or a shared worker: a listener may call back into the client and wait for the host.
   */
  private void notice(Runnable n) {
    notices.add(n);
    if (noticesQueued.getAndIncrement() == 0 && !runtime.listen(this::runNotices)) {
      runNotices(); // the runtime stops (every client closed): run them here
    }
  }

  private void runNotices() {
    do {
      Runnable n = notices.poll();
      try {
        if (n != null) {
          n.run();
        }
      } catch (RuntimeException e) {
        LOG.warn("{}: listener failed", state.name, e);
      }
    } while (noticesQueued.decrementAndGet() != 0);
  }

  /** Ends the session: every pending request fails with {@code cause} and every grant ends. */
  void fail(ChannelException cause, boolean notify) {
    if (!state.lose(cause)) {
      return;
    }
    cancel(keepaliveTask); // a lost session has nothing to keep alive or re-check
    cancel(recheckTask);
    for (Integer id : pending.keySet()) {
      answerFailure(id, cause);
    }
    for (RemoteGrant g : grants.values()) {
      g.end("SESSION_CLOSED");
    }
    grants.clear();
    // writes and reads in flight complete from the completion queue (the queue pair flushes);
    // close() fails whatever is still waiting then
    if (notify && !state.isClosed()) {
      // not WARN: the host ending a session (a refusal, a revocation) is expected, and the
      // application hears of it through its session-lost listener
      LOG.info("{}: session {} lost: {}", state.name, sessionId, cause.getMessage());
      Consumer<ChannelException> listener = lostListener;
      notice(() -> listener.accept(cause));
    }
  }
}
