package io.srdma.channel;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.record.CipherWarmup;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.TlsBinding;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tenant peer's session with a region host ({@code io.srdma.host.RegionHost}): mutual TLS 1.3
 * with the peer's certificate, session keys, one RC queue pair, and grants to write sealed records
 * into (and read owner-sealed records from) the tenant's regions.
 *
 * <pre>{@code
 * try (SecureRdmaClient client = SecureRdmaClient.connect(new ClientOptions()
 *     .credential(myCredential).trust(trust).host(hostAddress).hostName("h1"))) {
 *   RemoteGrant g = client.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20,
 *       Duration.ofMinutes(5));
 *   g.writeBlocking(0, ByteBuffer.wrap(bytes));          // convenience: allocates, waits
 *   long p = g.tryWrite(4096, buf, 0, 64);               // data path: allocates nothing
 *   while (p == WriteResult.BACK_PRESSURED) { client.pollCompletions(); p = g.tryWrite(...); }
 * }
 * }</pre>
 *
 * <p>Parts (one job each): {@link ClientConnection} and {@link ClientHandshake} (TLS on the shared
 * event loop; the connecting thread waits for the handshake, bounded), {@link ControlChannel} (the
 * host's frames on a shared worker, keep-alive and deadlines on the shared timer), {@link
 * SealedWriter} and {@link WriteStages} (on the writing threads), {@link SealedReader}, {@link
 * CompletionTarget} (this client's share of a {@link CompletionLane}: on the lane's thread, or a
 * caller of {@link #pollCompletions()}). Every client of a process shares one device context per
 * provider and device options ({@link SharedDeviceContext}) and its completion lanes ({@link
 * CompletionLanes}); each has its own protection domain, queue pair and registered staging and read
 * buffers.
 *
 * <p>Threads: per client, only {@code sealingThreads} sealers for large convenience writes (started
 * on demand), named {@code srdma-client-N-seal-*} and stopped by {@link #close}. The rest is one
 * per process, shared by every client whatever their number; the first client starts it, the last
 * one to close stops it (each join bounded). The control plane ({@link ClientRuntime}): an event
 * loop {@code srdma-client-control} (TLS for every control connection), a timer {@code
 * srdma-client-timer} (keep-alive, request deadlines, host certificate re-checks) and 2 to 4
 * workers {@code srdma-client-worker-*} (the host's frames, listeners, TLS certificate checks). The
 * data plane's completions: 2 completion lanes (1 on a one-CPU machine; system property {@code
 * srdma.client.completionLanes}, 1..16), each one completion queue shared by the queue pairs of the
 * clients on it and one poller thread {@code srdma-client-cq-<k>}; a client joins the lane with the
 * fewest clients. So a process of any number of clients runs 5 to 8 client threads by default (plus
 * sealers while large convenience writes run, and a listener thread {@code srdma-client-listener-*}
 * for each client whose revocation or session-lost listener runs: started on demand, ended after 30
 * s idle).
 *
 * <p>Thread safety: thread-safe; any thread may request grants, write, read and close. Listeners
 * ({@link #onRevoked}, {@link #onSessionLost}) run on client listener threads, one at a time per
 * client in the host's order, never on the workers that read the hosts' frames: they may call the
 * client and wait (ask for a grant, connect again). A {@link WriteCompletionHandler} runs on the
 * polling thread (the lane's thread, or a caller of {@link #pollCompletions()} of any client of the
 * same lane) and may not block: a blocked handler holds up the completions of every client of its
 * lane. Buffers: the client allocates and owns its staging memory and frees it when it closes; data
 * passed to a grant's {@code write} is copied (sealed) before {@code write} returns, and a {@code
 * read} returns a buffer the caller owns ({@link RemoteGrant}).
 */
public final class SecureRdmaClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SecureRdmaClient.class);
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private final String name;
  private final String identity;
  private final String tenant;
  private final String sessionId;
  private final TlsBinding.Kind bindingKind;
  private final SessionState state;
  private final ClientResources resources;
  private final KeyEpochs epochs;
  private final SealedWriter writer;
  private final SealedReader reader;
  private final ControlChannel control;
  private final ExecutorService sealingPool;
  private final ClientRuntime runtime;

  private SecureRdmaClient(
      ClientOptions o,
      AuthenticatedPeer peer,
      ClientConnection connection,
      ClientRuntime runtime,
      ClientResources r,
      String name)
      throws IOException {
    this.name = name;
    this.resources = r;
    this.runtime = runtime;
    PeerIdentity me = PeerIdentity.fromCertificate(o.credential().certificate());
    this.identity = me.toUri();
    this.tenant = me.tenant();
    ControlProxy proxy = new ControlProxy(new FrameWriter(connection.output()));
    AtomicInteger requestIds = new AtomicInteger(1);
    Duration wait = o.connectTimeout();
    ClientHandshake.Established e =
        ClientHandshake.run(
            peer,
            () -> connection.awaitFrame(wait),
            proxy,
            r.qp,
            r.credits,
            requestIds.getAndIncrement(),
            new HostResponderAddress(
                r.providerName(), o.allowedResponderAddresses(), connection.remoteAddress()));
    this.sessionId = e.sessionId();
    this.bindingKind = e.bindingKind();
    this.state = new SessionState(name);
    SealingKeys sealing = new SealingKeys(e.schedule().sendKeys());
    this.epochs =
        new KeyEpochs(
            e.schedule(),
            sealing,
            o.rekeyPolicy(),
            proxy,
            name,
            runtime.timer(),
            runtime::execute,
            o.requestTimeout());
    this.writer =
        new SealedWriter(
            state,
            r.qp,
            r.staging,
            o.stagingSlots(),
            e.hostReceives(),
            e.credits() ? new CreditWord(r.credits.buffer()) : null,
            o.maxRecordPayload(),
            sealing,
            epochs,
            4096,
            e.recordRuns() ? r.runRecords(name) : 1);
    if (writer.window() < o.stagingSlots()) {
      LOG.info(
          "{}: at most {} records in flight, the receives the host keeps posted for the session"
              + " (stagingSlots {}: writes past them would wait for a receive; this host returns no"
              + " receive credits)",
          name,
          writer.window(),
          o.stagingSlots());
    }
    AtomicInteger n = new AtomicInteger();
    this.sealingPool =
        o.sealingThreads() == 0
            ? null
            : Executors.newFixedThreadPool(
                o.sealingThreads(),
                t -> {
                  Thread th = new Thread(t, name + "-seal-" + n.incrementAndGet());
                  th.setDaemon(true);
                  return th;
                });
    WriteStages stages =
        new WriteStages(
            writer, state, sealing, sealingPool, o.sealingThreads(), o.requestTimeout());
    this.reader = new SealedReader(state, r.qp, r.read, o.maxReadBytes(), o.requestTimeout());
    this.control =
        new ControlChannel(
            o,
            state,
            connection,
            runtime,
            proxy,
            requestIds,
            tenant,
            sessionId,
            peer.certificate(),
            writer,
            stages,
            reader,
            epochs);
    epochs.onFailure(c -> control.fail(c, true));
    r.register(new CompletionTarget(state, writer, reader));
  }

  /**
   * Connects to a host: TLS 1.3 with the client's certificate, session handshake, queue pair.
   *
   * @throws ChannelException {@code CONNECT_FAILED}, {@code AUTHENTICATION_FAILED}, {@code
   *     QUOTA_EXCEEDED}, {@code PROTOCOL}, {@code TIMEOUT} or {@code INVALID_ARGUMENT}
   */
  public static SecureRdmaClient connect(ClientOptions options) {
    options.check();
    CipherWarmup.start();
    String name = "srdma-client-" + CLIENTS.incrementAndGet();
    ClientRuntime runtime = ClientRuntime.acquire();
    ClientResources r = new ClientResources();
    ClientConnection connection = null;
    try {
      r.open(options);
      MutualTls tls = ClientHandshake.tls(options);
      connection = ClientConnection.open(runtime, tls, options.host(), options.connectTimeout());
      connection.awaitHandshake(options.connectTimeout());
      AuthenticatedPeer peer = tls.authenticated(connection.engine());
      if (!PeerIdentity.HOST_TENANT.equals(peer.identity().tenant())) {
        throw new ChannelException(
            ChannelException.Reason.AUTHENTICATION_FAILED,
            "NOT_A_HOST",
            options.host()
                + " presented "
                + peer.identity()
                + ", not a host identity (srdma://"
                + PeerIdentity.HOST_TENANT
                + "/<name>)",
            null);
      }
      SecureRdmaClient c = new SecureRdmaClient(options, peer, connection, runtime, r, name);
      c.control.start();
      LOG.info(
          "{}: session {} with {} ({}) as {}, keys bound to the {}",
          c.name,
          c.sessionId,
          options.host(),
          peer.identity(),
          c.identity,
          c.bindingKind == TlsBinding.Kind.EXPORTER ? "TLS exporter" : "certificate transcript");
      return c;
    } catch (IOException | RuntimeException e) {
      r.close(connection);
      runtime.close();
      throw connectFailure(options, e);
    }
  }

  /** What a caller of {@link #connect} sees of a failure to connect. */
  private static RuntimeException connectFailure(ClientOptions options, Exception failure) {
    if (failure instanceof ChannelException e) {
      return e;
    }
    if (failure instanceof KeyExchangeException e) {
      return new ChannelException(
          e.category() == KeyExchangeException.Category.KEY_SCHEDULE
                  || e.category() == KeyExchangeException.Category.PEER_CERTIFICATE
                  || e.reason() == KeyExchangeException.Reason.RESUMPTION_REFUSED
              ? ChannelException.Reason.AUTHENTICATION_FAILED
              : ChannelException.Reason.CONNECT_FAILED,
          e.reason().name(),
          "connecting to " + options.host() + ": " + e.getMessage(),
          e);
    }
    if (failure instanceof ProtocolException e) {
      return new ChannelException(
          ChannelException.Reason.PROTOCOL, e.reason().name(), e.getMessage(), e);
    }
    if (failure instanceof java.net.SocketTimeoutException e) {
      return new ChannelException(
          ChannelException.Reason.TIMEOUT,
          null,
          "session handshake with " + options.host() + " timed out",
          e);
    }
    if (failure instanceof IOException || failure instanceof VerbsException) {
      return new ChannelException(
          ChannelException.Reason.CONNECT_FAILED,
          null,
          "connecting to " + options.host() + ": " + failure.getMessage(),
          failure);
    }
    return (RuntimeException) failure;
  }

  /** How this session's keys are bound to its TLS connection (agreed in HELLO). */
  TlsBinding.Kind bindingKind() {
    return bindingKind;
  }

  /** This peer's identity, from its certificate. */
  public String identity() {
    return identity;
  }

  /** This peer's tenant. */
  public String tenant() {
    return tenant;
  }

  /** Hex of the session id the host chose. */
  public String sessionId() {
    return sessionId;
  }

  /** The key epoch records are sealed in now. */
  public int epoch() {
    return epochs.epoch();
  }

  /** Whether the session is usable. */
  public boolean isOpen() {
    return state.isOpen();
  }

  /**
   * Called (on a client listener thread, in the host's order) when the host ends a grant; the
   * reason is e.g. REVOKED. Never on a thread that reads the hosts' frames, so the listener may
   * call the client and wait for the host, e.g. ask for a new grant.
   */
  public void onRevoked(BiConsumer<RemoteGrant, String> listener) {
    control.onRevoked(listener);
  }

  /**
   * Called once, on a client listener thread (after the revocations the host sent before), when the
   * session is lost (not when it is closed locally); the listener may connect again.
   */
  public void onSessionLost(Consumer<ChannelException> listener) {
    control.onSessionLost(listener);
  }

  /**
   * Called on the polling thread as writes complete (null: no handler). Replaces the previous one.
   * The polling thread is the thread of this client's completion lane, or a thread in {@link
   * #pollCompletions()} of this or another client of the same lane.
   */
  public void onWritesCompleted(WriteCompletionHandler handler) {
    writer.handler(handler);
  }

  /**
   * The position up to which every write completed (records, in posting order); a write returned by
   * {@link RemoteGrant#tryWrite} completed when this reached its position. A failed write completes
   * too: check {@link #dataPathFailure()}. Allocates nothing.
   */
  public long completedPosition() {
    return writer.completedPosition();
  }

  /** The position of the last posted write. Thread-safe. */
  public long postedPosition() {
    return writer.postedPosition();
  }

  /**
   * Zero-length signaled RDMA WRITEs this client posted so far to complete unsignaled writes (only
   * some writes ask for a completion; when the last that did completes and unsignaled ones follow
   * it, one such fence makes them complete: docs/data-plane.md). Thread-safe; for metrics and
   * tests.
   */
  public long fencesPosted() {
    return writer.fences();
  }

  /**
   * Sessions of this process so far (all clients, since the SDK was loaded) whose host takes record
   * runs but whose device held them below the 16 records a run may carry: a device that offers
   * fewer scatter/gather entries a request than 16 (runs of as many records as it offers), or that
   * refused a queue pair with them (one record a WRITE, as with a host that takes no runs). Such
   * writes work as before, at a higher transport cost per record (docs/protocol.md, "Record runs");
   * the first such session on a device context logs why at info. Thread-safe; for metrics and
   * tests.
   */
  public static long recordRunFallbacks() {
    return ClientResources.runFallbacks();
  }

  /**
   * Handles the write and read completions there are now on this client's completion lane, on the
   * calling thread (the lane's thread does so too; whichever polls first handles them). The lane's
   * queue is shared with other clients of the process: this call may therefore also handle their
   * completions, and call their {@link WriteCompletionHandler}s, on the calling thread. A failure
   * of the lane's queue fails the data path of every client on it ({@link #dataPathFailure()}
   * {@code FATAL_ERR}) rather than throwing. Allocates nothing.
   *
   * @return completions handled, of any client of the lane (0 also when another thread was polling)
   */
  public int pollCompletions() {
    return state.isClosed() ? 0 : resources.lane.poll();
  }

  /** The status of the first failed completion of this session's queue pair, or null. */
  public WcStatus dataPathFailure() {
    return state.dataPathFailure();
  }

  /**
   * Asks the host for a grant on one of this tenant's regions.
   *
   * @param region the region's name in the policy
   * @param access READ and/or WRITE, not empty
   * @param offset the first byte of the region, at least 0
   * @param length bytes, at least 1 ({@code offset + length} within a long)
   * @param ttl at least 1 ms; any longer TTL (even {@code ChronoUnit.FOREVER}'s) is clipped by the
   *     host to the role's {@code max-ttl}
   * @return a stage completing with the grant, or failing with {@code GRANT_DENIED} (its {@link
   *     ChannelException#detail()} is the policy's reason, e.g. {@code OUT_OF_BOUNDS}), {@code
   *     TIMEOUT} or {@code SESSION_CLOSED}
   */
  public CompletionStage<RemoteGrant> requestGrant(
      String region, Set<Access> access, long offset, long length, Duration ttl) {
    if (region == null || access == null || access.isEmpty() || ttl == null) {
      return RemoteGrant.failed(
          ChannelException.Reason.INVALID_ARGUMENT, "region, access and ttl are required");
    }
    // a TTL past a long of milliseconds (ChronoUnit.FOREVER's) asks for as long as can be said:
    // the host clips every TTL to the role's max-ttl anyway
    long ttlMillis =
        ttl.isNegative()
            ? -1
            : ttl.getSeconds() >= Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : ttl.toMillis();
    if (offset < 0 || length < 1 || ttlMillis < 1 || offset > Long.MAX_VALUE - length) {
      return RemoteGrant.failed(
          ChannelException.Reason.INVALID_ARGUMENT,
          "offset must be >= 0, length and ttl > 0, got " + offset + ", " + length + ", " + ttl);
    }
    return control.requestGrant(region, Access.bits(access), offset, length, ttlMillis);
  }

  /** {@link #requestGrant}, waiting for the answer; throws {@link ChannelException}. */
  public RemoteGrant grant(
      String region, Set<Access> access, long offset, long length, Duration ttl) {
    return join(requestGrant(region, access, offset, length, ttl).toCompletableFuture(), timeout());
  }

  Duration timeout() {
    return control.timeout();
  }

  /** Device context users now (tests of the shared context). */
  int deviceContextUsers() {
    return resources.context.users();
  }

  /** Ends the session: tells the host, closes the connection and frees every resource. */
  @Override
  public void close() {
    if (!state.close()) {
      return;
    }
    writer.closeBarrier(); // a write mid-seal ends before keys and staging go; later ones refuse
    ChannelException closing =
        new ChannelException(ChannelException.Reason.SESSION_CLOSED, "session closed");
    control.close(closing);
    if (sealingPool != null) {
      sealingPool.shutdownNow();
    }
    writer.failWaiting(closing);
    reader.failWaiting(closing);
    resources.close(null);
    epochs.close();
    runtime.close();
  }

  /** A record sealed for {@code relativeOffset} of a grant, not sent (tests, AttackProbe). */
  byte[] sealRecord(RemoteGrant g, long relativeOffset, byte[] payload) {
    return writer.sealUnsent(g.target(), relativeOffset, payload);
  }

  /** A raw post without the writer's checks (tests, AttackProbe); see SealedReader#rawPost. */
  WcStatus rawPost(
      WrOpcode op, long remoteAddress, int rkey, byte[] bytes, int length, int imm, long tag) {
    return reader.rawPost(op, remoteAddress, rkey, bytes, length, imm, tag);
  }

  static <T> T join(CompletableFuture<T> f, Duration timeout) {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ChannelException c) {
        throw new ChannelException(
            c.reason(), c.detail(), c.getMessage().substring(c.reason().name().length() + 2), c);
      }
      throw new ChannelException(
          ChannelException.Reason.SESSION_CLOSED, null, String.valueOf(e.getCause()), e.getCause());
    } catch (TimeoutException e) {
      throw new ChannelException(ChannelException.Reason.TIMEOUT, "no result within " + timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ChannelException(ChannelException.Reason.SESSION_CLOSED, "interrupted");
    }
  }
}
