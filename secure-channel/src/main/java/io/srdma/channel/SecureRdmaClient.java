package io.srdma.channel;

import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.GrantFlyweight;
import io.srdma.channel.protocol.HelloAckFlyweight;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.protocol.RevokeReason;
import io.srdma.channel.protocol.Side;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.RegionKeyring;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tenant peer's session with a {@link RegionHost}: mutual TLS 1.3 with the peer's certificate,
 * session keys, one RC queue pair, and grants to write sealed records into (and read owner-sealed
 * records from) the tenant's regions.
 *
 * <pre>{@code
 * try (SecureRdmaClient client = SecureRdmaClient.connect(new ClientOptions()
 *     .credential(myCredential).trust(trust).host(hostAddress))) {
 *   RemoteGrant g = client.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20,
 *       Duration.ofMinutes(5));
 *   g.writeBlocking(0, ByteBuffer.wrap(bytes));
 * }
 * }</pre>
 *
 * <p>Threads: a control reader, a completion poller, a timer (keep-alive and deadlines) and {@code
 * sealingThreads} sealers, all named {@code srdma-client-N-*} and stopped by {@link #close}.
 *
 * <p>Thread safety: thread-safe; any thread may request grants, write, read and close. Listeners
 * ({@link #onRevoked}, {@link #onSessionLost}) run on the client's own threads and must not block.
 * Buffers: the client allocates and owns its staging memory and frees it when it closes; data
 * passed to a grant's {@code write} is copied (sealed) before {@code write} returns, and a {@code
 * read} returns a buffer the caller owns ({@link RemoteGrant}).
 */
public final class SecureRdmaClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SecureRdmaClient.class);
  private static final AtomicInteger CLIENTS = new AtomicInteger();
  private static final int VERSION = 1;
  private static final long READ_WR = 1L << 40;
  private static final long RAW_WR = 1L << 41;

  private final ClientOptions options;
  private final String name;
  private final String identity;
  private final String tenant;
  private final SSLSocket socket;
  private final FrameReader reader;
  private final ControlProxy proxy;
  private final DeviceContext context;
  private final ProtectionDomain pd;
  private final CompletionQueue cq;
  private final QueuePair qp;
  private final MemoryRegion staging;
  private final MemoryRegion readBuffer;
  private final KeySchedule schedule;
  private final SealingKeys sealing;
  private final ThreadLocal<RecordSealer> sealers;
  private final String sessionId;
  private final TlsBinding.Kind bindingKind;
  private final int slotSize;
  private final ArrayBlockingQueue<Integer> freeSlots;
  private final PendingWrite[] inflight;
  private final SendWorkRequest[] slotRequests;
  private final ArrayBlockingQueue<SendWorkRequest> ready;
  private final SendWorkRequest[] postBatch;
  private final ReentrantLock postLock = new ReentrantLock();
  private final ReentrantLock readLock = new ReentrantLock();
  private final SendWorkRequest readRequest = new SendWorkRequest(1);
  private volatile CompletableFuture<WcStatus> readDone;
  private final Map<Integer, CompletableFuture<Object>> pending = new ConcurrentHashMap<>();
  private final Map<Long, RemoteGrant> grants = new ConcurrentHashMap<>();
  private final AtomicInteger requestIds = new AtomicInteger(1);
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicBoolean rekeyPending = new AtomicBoolean();
  private final AtomicLong epochRecords = new AtomicLong();
  private final AtomicLong epochBytes = new AtomicLong();
  private volatile long epochStartNanos = System.nanoTime();
  private final ScheduledExecutorService timer;
  private final ExecutorService sealingPool;
  private final Thread controlThread;
  private final Thread pollerThread;
  private volatile ChannelException lost;
  private volatile WcStatus dataPlaneFailure;
  private volatile BiConsumer<RemoteGrant, String> revokedListener = (g, r) -> {};
  private volatile Consumer<ChannelException> lostListener = e -> {};

  private SecureRdmaClient(ClientOptions o, AuthenticatedPeer peer, Resources r)
      throws IOException {
    this.options = o;
    this.name = "srdma-client-" + CLIENTS.incrementAndGet();
    this.socket = peer.socket();
    PeerIdentity me = PeerIdentity.fromCertificate(o.credential().certificate());
    this.identity = me.toUri();
    this.tenant = me.tenant();
    this.context = r.context;
    this.pd = r.pd;
    this.cq = r.cq;
    this.qp = r.qp;
    this.staging = r.staging;
    this.readBuffer = r.read;
    this.slotSize = o.maxRecordPayload() + SealedLayout.RECORD_OVERHEAD;
    this.reader = new FrameReader(socket.getInputStream(), Side.SERVER);
    this.proxy = new ControlProxy(new FrameWriter(socket.getOutputStream()));
    socket.setSoTimeout((int) o.connectTimeout().toMillis());
    SecureRandom random = new SecureRandom();
    HelloAckFlyweight ack;
    TlsBinding.Kind kind;
    byte[] sessionIdBytes;
    try (X25519KeyPair local = X25519KeyPair.generate(random)) {
      int announced = Capabilities.local();
      proxy.hello(nextRequestId(), VERSION, announced, local.publicKey(), qp.localInfo());
      Frame f = next(reader);
      if (f.type() == MessageType.ERROR) {
        throw refusal(f);
      }
      ack = f.expect(MessageType.HELLO_ACK).helloAck();
      if (ack.version() != VERSION) {
        throw new ProtocolException(
            ProtocolException.Reason.UNSUPPORTED_VERSION, "host chose version " + ack.version());
      }
      sessionIdBytes = ack.sessionId();
      ConnectionInfo hostInfo = ack.connectionInfo();
      kind = Capabilities.bindingKind(Capabilities.checkAnswer(announced, ack.capabilities()));
      try (TlsBinding binding = peer.binding(Role.INITIATOR, kind)) {
        schedule =
            KeySchedule.builder()
                .role(Role.INITIATOR)
                .localKey(local)
                .peerPublicKey(ack.publicKey())
                .binding(binding)
                .sessionId(sessionIdBytes)
                .initiatorQpn(qp.qpn())
                .responderQpn(hostInfo.qpn())
                .establish();
      }
      proxy.keyConfirm(0, 0, schedule.current().confirmation());
      Frame confirm = next(reader);
      if (confirm.type() == MessageType.ERROR) {
        throw refusal(confirm);
      }
      schedule
          .current()
          .verifyPeerConfirmation(
              confirm.expect(MessageType.KEY_CONFIRM).keyConfirm().confirmation());
      qp.readyToReceive(hostInfo);
      qp.readyToSend();
    }
    this.sessionId = HexFormat.of().formatHex(sessionIdBytes);
    this.bindingKind = kind;
    this.sealing = new SealingKeys(schedule.sendKeys());
    this.sealers = ThreadLocal.withInitial(() -> new RecordSealer(sealing, o.maxRecordPayload()));
    int slots = o.stagingSlots();
    this.freeSlots = new ArrayBlockingQueue<>(slots);
    this.inflight = new PendingWrite[slots];
    this.slotRequests = new SendWorkRequest[slots];
    this.ready = new ArrayBlockingQueue<>(slots);
    this.postBatch = new SendWorkRequest[slots];
    for (int i = 0; i < slots; i++) {
      freeSlots.add(i);
      slotRequests[i] =
          new SendWorkRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).signaled(true);
    }
    this.timer = Executors.newSingleThreadScheduledExecutor(t -> daemon(t, name + "-timer"));
    AtomicInteger n = new AtomicInteger();
    this.sealingPool =
        o.sealingThreads() == 0
            ? null
            : Executors.newFixedThreadPool(
                o.sealingThreads(), t -> daemon(t, name + "-seal-" + n.incrementAndGet()));
    socket.setSoTimeout(0);
    controlThread = daemon(this::readControl, name + "-control");
    pollerThread = daemon(this::poll, name + "-cq");
    long keepalive = o.keepalive().toMillis();
    // runs until close() shuts the timer down; keepalive() handles its own failures
    var unused =
        timer.scheduleAtFixedRate(this::keepalive, keepalive, keepalive, TimeUnit.MILLISECONDS);
    this.hostCertificate = peer.certificate();
    // the host's certificate can be revoked or expire during the session: the session then ends
    var unusedCheck =
        timer.scheduleAtFixedRate(
            this::recheckHost,
            HOST_RECHECK.toMillis(),
            HOST_RECHECK.toMillis(),
            TimeUnit.MILLISECONDS);
  }

  /** How often a live session re-checks the host's certificate against the CRL and its dates. */
  static final Duration HOST_RECHECK = Duration.ofMillis(500);

  /**
   * An unusable CRL (being replaced, or past nextUpdate) ends the session only when it stays so
   * this long: a copy over the file must not end every session.
   */
  static final Duration UNKNOWN_STATUS_GRACE = Duration.ofSeconds(2);

  private final java.security.cert.X509Certificate hostCertificate;
  private long revocationUnknownSinceNanos; // timer thread only; 0: status known

  /** Timer thread: ends the session when the host's certificate is revoked or expired. */
  private void recheckHost() {
    if (!isOpen()) {
      return;
    }
    try {
      options.trust().checkStillValid(hostCertificate);
      revocationUnknownSinceNanos = 0;
    } catch (KeyExchangeException e) {
      if (e.reason() == KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN) {
        long now = System.nanoTime();
        if (revocationUnknownSinceNanos == 0) {
          revocationUnknownSinceNanos = now;
          return;
        }
        if (now - revocationUnknownSinceNanos < UNKNOWN_STATUS_GRACE.toNanos()) {
          return;
        }
      }
      LOG.warn("{}: host certificate no longer trusted, session ends: {}", name, e.getMessage());
      fail(
          new ChannelException(
              ChannelException.Reason.AUTHENTICATION_FAILED,
              e.reason().name(),
              "the host's certificate is no longer trusted: " + e.getMessage(),
              e),
          true);
    } catch (RuntimeException e) {
      LOG.debug("{}: host certificate re-check failed: {}", name, e.toString());
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * Connects to a host: TLS 1.3 with the client's certificate, session handshake, queue pair.
   *
   * @throws ChannelException {@code CONNECT_FAILED}, {@code AUTHENTICATION_FAILED}, {@code
   *     QUOTA_EXCEEDED}, {@code PROTOCOL}, {@code TIMEOUT} or {@code INVALID_ARGUMENT}
   */
  public static SecureRdmaClient connect(ClientOptions options) {
    options.check();
    io.srdma.channel.record.CipherWarmup.start();
    Resources r = new Resources();
    AuthenticatedPeer peer = null;
    try {
      r.open(options);
      peer = tls(options).connect(options.host(), options.connectTimeout());
      if (!RegionHost.HOST_TENANT.equals(peer.identity().tenant())) {
        throw new ChannelException(
            ChannelException.Reason.AUTHENTICATION_FAILED,
            "NOT_A_HOST",
            options.host()
                + " presented "
                + peer.identity()
                + ", not a host identity (srdma://"
                + RegionHost.HOST_TENANT
                + "/<name>)",
            null);
      }
      SecureRdmaClient c = new SecureRdmaClient(options, peer, r);
      c.controlThread.start();
      c.pollerThread.start();
      LOG.info(
          "{}: session {} with {} ({}) as {}, keys bound to the {}",
          c.name,
          c.sessionId,
          options.host(),
          peer.identity(),
          c.identity,
          c.bindingKind == TlsBinding.Kind.EXPORTER ? "TLS exporter" : "certificate transcript");
      return c;
    } catch (ChannelException e) {
      r.close(peer);
      throw e;
    } catch (KeyExchangeException e) {
      r.close(peer);
      throw new ChannelException(
          e.category() == KeyExchangeException.Category.KEY_SCHEDULE
                  || e.category() == KeyExchangeException.Category.PEER_CERTIFICATE
                  || e.reason() == KeyExchangeException.Reason.RESUMPTION_REFUSED
              ? ChannelException.Reason.AUTHENTICATION_FAILED
              : ChannelException.Reason.CONNECT_FAILED,
          e.reason().name(),
          "connecting to " + options.host() + ": " + e.getMessage(),
          e);
    } catch (ProtocolException e) {
      r.close(peer);
      throw new ChannelException(
          ChannelException.Reason.PROTOCOL, e.reason().name(), e.getMessage(), e);
    } catch (java.net.SocketTimeoutException e) {
      r.close(peer);
      throw new ChannelException(
          ChannelException.Reason.TIMEOUT,
          null,
          "session handshake with " + options.host() + " timed out",
          e);
    } catch (IOException | VerbsException e) {
      r.close(peer);
      throw new ChannelException(
          ChannelException.Reason.CONNECT_FAILED,
          null,
          "connecting to " + options.host() + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * The TLS client: pinned to the expected host, whose certificate is checked before this client
   * sends its own; or, with {@link ClientOptions#anyHostForDevelopment()}, any host of the
   * deployment, with a warning on every connect.
   */
  private static MutualTls tls(ClientOptions options) {
    if (options.hostIdentity() != null) {
      return MutualTls.client(options.credential(), options.trust(), options.hostIdentity());
    }
    LOG.warn(
        "connecting to {} WITHOUT host pinning (ClientOptions.anyHostForDevelopment()): any host"
            + " of the deployment is accepted and could read this tenant's data; set"
            + " ClientOptions.hostIdentity(srdma://host/<name>) outside development",
        options.host());
    return MutualTls.client(options.credential(), options.trust());
  }

  /** How this session's keys are bound to its TLS connection (agreed in HELLO); thread-safe. */
  TlsBinding.Kind bindingKind() {
    return bindingKind;
  }

  private static ChannelException refusal(Frame f) {
    ErrorCode code = f.error().code();
    ChannelException.Reason reason =
        switch (code) {
          case QUOTA_EXCEEDED, RATE_LIMITED -> ChannelException.Reason.QUOTA_EXCEEDED;
          case KEY_CONFIRMATION_FAILED -> ChannelException.Reason.AUTHENTICATION_FAILED;
          case TIMEOUT -> ChannelException.Reason.TIMEOUT;
          case SHUTTING_DOWN -> ChannelException.Reason.SESSION_CLOSED;
          default -> ChannelException.Reason.PROTOCOL;
        };
    return new ChannelException(reason, code.name(), "host refused: " + f.error().text(), null);
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
    return sealing.epoch();
  }

  /** Whether the session is usable. */
  public boolean isOpen() {
    return !closed.get() && lost == null;
  }

  /** Called (on the control thread) when the host ends a grant; the reason is e.g. REVOKED. */
  public void onRevoked(BiConsumer<RemoteGrant, String> listener) {
    revokedListener = listener;
  }

  /** Called once when the session is lost (not when it is closed locally). */
  public void onSessionLost(Consumer<ChannelException> listener) {
    lostListener = listener;
  }

  /**
   * Asks the host for a grant on one of this tenant's regions.
   *
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
    long ttlMillis = ttl.toMillis();
    if (offset < 0 || length < 1 || ttlMillis < 1 || offset > Long.MAX_VALUE - length) {
      return RemoteGrant.failed(
          ChannelException.Reason.INVALID_ARGUMENT,
          "offset must be >= 0, length and ttl > 0, got " + offset + ", " + length + ", " + ttl);
    }
    return request(
            id -> proxy.grantRequest(id, region, Access.bits(access), offset, length, ttlMillis))
        .thenApply(o -> (RemoteGrant) o);
  }

  /** {@link #requestGrant}, waiting for the answer; throws {@link ChannelException}. */
  public RemoteGrant grant(
      String region, Set<Access> access, long offset, long length, Duration ttl) {
    return join(requestGrant(region, access, offset, length, ttl).toCompletableFuture(), timeout());
  }

  Duration timeout() {
    return options.requestTimeout().multipliedBy(2);
  }

  /** Ends the session: tells the host, closes the connection and frees every resource. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (lost == null) {
      try {
        proxy.close(0);
      } catch (IOException e) {
        LOG.debug("{}: CLOSE not sent: {}", name, e.getMessage());
      }
    }
    ChannelException closing =
        new ChannelException(ChannelException.Reason.SESSION_CLOSED, "session closed");
    fail(closing, false);
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    timer.shutdownNow();
    if (sealingPool != null) {
      sealingPool.shutdownNow();
    }
    joinThread(controlThread);
    joinThread(pollerThread);
    failInflight(closing);
    qp.close();
    staging.close();
    readBuffer.close();
    cq.close();
    pd.close();
    context.close();
    schedule.close();
  }

  private static void joinThread(Thread t) {
    try {
      t.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------- control plane

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

  private CompletableFuture<Object> request(Sender sender) {
    ChannelException gone = lost;
    if (gone != null || closed.get()) {
      return RemoteGrant.failed(ChannelException.Reason.SESSION_CLOSED, "session is over");
    }
    int id = nextRequestId();
    CompletableFuture<Object> f = new CompletableFuture<>();
    pending.put(id, f);
    try {
      sender.send(id);
    } catch (IOException e) {
      pending.remove(id);
      fail(
          new ChannelException(
              ChannelException.Reason.SESSION_CLOSED, null, "control connection failed", e),
          true);
      return RemoteGrant.failed(
          ChannelException.Reason.SESSION_CLOSED, "control connection failed");
    }
    long ms = options.requestTimeout().toMillis();
    // the deadline fails the request (and the session) itself; nothing waits on this future
    var unused =
        timer.schedule(
            () -> {
              if (pending.remove(id) == f && !f.isDone()) {
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
            },
            ms,
            TimeUnit.MILLISECONDS);
    return f;
  }

  private void readControl() {
    try {
      while (!closed.get()) {
        Frame f = next(reader);
        switch (f.type()) {
          case GRANT -> answer(f.requestId(), grantFrom(f.grant()));
          case GRANT_DENIED ->
              answerFailure(
                  f.requestId(),
                  new ChannelException(
                      ChannelException.Reason.GRANT_DENIED,
                      f.grantDenied().reason().name(),
                      f.grantDenied().reason() + ": " + f.grantDenied().text(),
                      null));
          case REVOKE -> revoked(f.requestId(), f.revoke().grantId(), f.revoke().reason());
          case REKEY -> rekeyAcknowledged(f.rekey().epoch());
          case REGION_KEY -> regionKeyRotated(f);
          case PONG -> answer(f.requestId(), true);
          case PING -> proxy.pong(f.requestId(), f.ping().payload());
          case ERROR -> {
            fail(refusal(f), true);
            return;
          }
          case CLOSE -> {
            fail(
                new ChannelException(
                    ChannelException.Reason.SESSION_CLOSED, "host closed the session"),
                true);
            return;
          }
          default ->
              throw new ProtocolException(
                  ProtocolException.Reason.UNEXPECTED_TYPE, f.type() + " is not expected now");
        }
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

  private RemoteGrant grantFrom(GrantFlyweight g) {
    RemoteGrant grant =
        new RemoteGrant(
            this,
            g.grantId(),
            tenant,
            g.region(),
            g.offset(),
            g.length(),
            Access.fromBits(g.operations()),
            Instant.ofEpochMilli(g.expiryEpochMillis()),
            g.remoteAddress(),
            g.rkey(),
            g.regionKey(),
            options.maxRecordPayload());
    grants.put(grant.id(), grant);
    return grant;
  }

  private void answer(int requestId, Object value) {
    CompletableFuture<Object> f = pending.remove(requestId);
    if (f != null) {
      f.complete(value);
    }
  }

  private void answerFailure(int requestId, ChannelException e) {
    CompletableFuture<Object> f = pending.remove(requestId);
    if (f != null) {
      f.completeExceptionally(e);
    }
  }

  /** REGION_KEY (control thread): a newer region key for a READ grant this client holds. */
  private void regionKeyRotated(Frame f) {
    byte[] material = f.regionKey().regionKey();
    RemoteGrant g = grants.get(f.regionKey().grantId());
    if (g == null) {
      java.util.Arrays.fill(material, (byte) 0); // the grant ended meanwhile
      return;
    }
    g.regionKeyRotated(f.regionKey().generation(), material);
    try {
      var unused =
          timer.schedule(
              g::expireRegionKeys,
              RegionKeyring.GRACE.toMillis() + 100,
              TimeUnit.MILLISECONDS); // wipes the previous generation's key after its grace
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing: every key is wiped by close()
    }
  }

  private void revoked(int requestId, long grantId, RevokeReason reason) {
    RemoteGrant g = grants.remove(grantId);
    if (g != null) {
      g.end(reason.name());
      try {
        revokedListener.accept(g, reason.name());
      } catch (RuntimeException e) {
        LOG.warn("{}: revocation listener failed", name, e);
      }
    }
    if (requestId != 0) {
      answer(requestId, true);
    }
  }

  CompletionStage<Void> release(RemoteGrant g) {
    return request(id -> proxy.release(id, g.id())).thenApply(o -> null);
  }

  private void keepalive() {
    if (isOpen()) {
      // an unanswered ping fails the session through the request's deadline
      var unused = request(id -> proxy.ping(id, System.nanoTime()));
    }
  }

  private void maybeRekey() {
    if (!options
        .rekeyPolicy()
        .isDue(
            epochRecords.get(),
            epochBytes.get(),
            Duration.ofNanos(System.nanoTime() - epochStartNanos))) {
      return;
    }
    if (!rekeyPending.compareAndSet(false, true)) {
      return;
    }
    try {
      schedule.rekey();
      sealing.rekey(schedule.sendKeys());
      epochRecords.set(0);
      epochBytes.set(0);
      epochStartNanos = System.nanoTime();
      proxy.rekey(0, sealing.epoch());
      LOG.debug("{}: now sealing in epoch {}", name, sealing.epoch());
    } catch (IOException | KeyExchangeException e) {
      fail(
          new ChannelException(
              ChannelException.Reason.SESSION_CLOSED, null, "rekey failed: " + e.getMessage(), e),
          true);
    }
  }

  private void rekeyAcknowledged(int epoch) {
    if (epoch == sealing.epoch()) {
      rekeyPending.set(false);
    }
  }

  private void fail(ChannelException cause, boolean notify) {
    boolean first;
    synchronized (this) {
      first = lost == null;
      if (first) {
        lost = cause;
      }
    }
    if (!first) {
      return;
    }
    for (Integer id : pending.keySet()) {
      answerFailure(id, cause);
    }
    for (RemoteGrant g : grants.values()) {
      g.end("SESSION_CLOSED");
    }
    grants.clear();
    if (notify && !closed.get()) {
      LOG.warn("{}: session {} lost: {}", name, sessionId, cause.getMessage());
      try {
        lostListener.accept(cause);
      } catch (RuntimeException e) {
        LOG.warn("{}: session-lost listener failed", name, e);
      }
    }
  }

  // ---------------------------------------------------------------- data plane

  /** One write: completes when all its records completed. */
  private static final class PendingWrite {
    final CompletableFuture<Void> done = new CompletableFuture<>();
    final AtomicInteger remaining;

    PendingWrite(int records) {
      remaining = new AtomicInteger(records);
    }

    void recordDone() {
      if (remaining.decrementAndGet() == 0) {
        done.complete(null);
      }
    }
  }

  CompletionStage<Void> write(RemoteGrant g, long relativeOffset, ByteBuffer data) {
    int payload = data.remaining();
    if (payload < 1) {
      return RemoteGrant.failed(ChannelException.Reason.INVALID_ARGUMENT, "nothing to write");
    }
    int max = options.maxRecordPayload();
    int records = SealedLayout.records(payload, max);
    long stride = roundUp(max + SealedLayout.RECORD_OVERHEAD, g.unit);
    long span =
        (records - 1) * stride
            + (payload - (long) (records - 1) * max)
            + SealedLayout.RECORD_OVERHEAD;
    CompletableFuture<Void> refused = g.check(Access.WRITE, relativeOffset, span);
    if (refused != null) {
      return refused;
    }
    if (relativeOffset % g.unit != 0) {
      return RemoteGrant.failed(
          ChannelException.Reason.OUT_OF_BOUNDS,
          "offset " + relativeOffset + " is not a multiple of the grant's write unit " + g.unit);
    }
    CompletableFuture<Void> gone = usable();
    if (gone != null) {
      return gone;
    }
    PendingWrite pw = new PendingWrite(records);
    int batch = Math.max(1, Math.min(records, options.stagingSlots() / 2));
    int[] slots = new int[batch];
    try {
      for (int first = 0; first < records; first += batch) {
        int count = Math.min(batch, records - first);
        for (int i = 0; i < count; i++) {
          Integer s = freeSlots.poll(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
          if (s == null) {
            for (int j = 0; j < i; j++) {
              freeSlots.add(slots[j]);
            }
            pw.done.completeExceptionally(
                new ChannelException(
                    ChannelException.Reason.RESOURCE_EXHAUSTED,
                    "no staging slot free within " + options.requestTimeout()));
            return pw.done;
          }
          slots[i] = s;
        }
        try {
          seal(g, relativeOffset, data, first, count, slots, stride, pw);
        } catch (ChannelException e) {
          for (int i = 0; i < count; i++) {
            inflight[slots[i]] = null;
            freeSlots.add(slots[i]);
          }
          pw.done.completeExceptionally(e);
          return pw.done;
        }
        for (int i = 0; i < count; i++) {
          ready.add(slotRequests[slots[i]]);
        }
        drain();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      pw.done.completeExceptionally(
          new ChannelException(ChannelException.Reason.SESSION_CLOSED, "interrupted"));
    }
    epochRecords.addAndGet(records);
    epochBytes.addAndGet(payload);
    maybeRekey();
    return pw.done;
  }

  private void seal(
      RemoteGrant g,
      long relativeOffset,
      ByteBuffer data,
      int first,
      int count,
      int[] slots,
      long stride,
      PendingWrite pw) {
    int max = options.maxRecordPayload();
    // Work sharing: the calling thread and up to sealingThreads pool threads take the next
    // unsealed record until none is left, so every thread seals about count / threads records.
    AtomicInteger next = new AtomicInteger();
    Runnable share =
        () -> {
          for (int k; (k = next.getAndIncrement()) < count; ) {
            sealOne(g, relativeOffset, data, first + k, slots[k], stride, max, pw);
          }
        };
    int helpers = sealingPool == null ? 0 : Math.min(count - 1, options.sealingThreads());
    if (helpers == 0) {
      share.run();
      return;
    }
    CompletableFuture<?>[] parallel = new CompletableFuture<?>[helpers];
    for (int i = 0; i < helpers; i++) {
      parallel[i] = CompletableFuture.runAsync(share, sealingPool);
    }
    RuntimeException failed = null;
    try {
      share.run();
    } catch (RuntimeException e) {
      failed = e;
    }
    try {
      CompletableFuture.allOf(parallel).join(); // no helper still writes a slot after this
    } catch (CompletionException e) {
      RuntimeException helper = e.getCause() instanceof ChannelException c ? c : e;
      if (failed == null) {
        failed = helper;
      } else {
        failed.addSuppressed(helper);
      }
    }
    if (failed != null) {
      throw failed;
    }
  }

  private void sealOne(
      RemoteGrant g,
      long relativeOffset,
      ByteBuffer data,
      int index,
      int slot,
      long stride,
      int max,
      PendingWrite pw) {
    int from = data.position() + index * max;
    int n = Math.min(max, data.limit() - from);
    long rel = relativeOffset + index * stride;
    int length =
        sealers
            .get()
            .seal(
                data.slice(from, n),
                g.writeBinding,
                g.offset() + rel,
                staging.buffer(),
                slot * slotSize);
    if (length < 0) {
      throw new ChannelException(
          ChannelException.Reason.RESOURCE_EXHAUSTED, "sealing refused: " + length);
    }
    SendWorkRequest wr = slotRequests[slot];
    wr.remote(g.remoteAddress + rel, g.rkey).immData((g.slot() << 24) | (int) (rel / g.unit));
    wr.sgl().set(staging, (long) slot * slotSize, length);
    inflight[slot] = pw;
  }

  private static long roundUp(long value, long unit) {
    return (value + unit - 1) / unit * unit;
  }

  private void drain() {
    while (!ready.isEmpty() && postLock.tryLock()) {
      int n = 0;
      try {
        SendWorkRequest w;
        while (n < postBatch.length && (w = ready.poll()) != null) {
          postBatch[n++] = w;
        }
        if (n > 0) {
          qp.postSend(postBatch, n);
        }
      } catch (VerbsException e) {
        WcStatus failed = dataPlaneFailure;
        ChannelException c =
            new ChannelException(
                failed == null
                    ? ChannelException.Reason.TRANSPORT_FAILED
                    : DataPathFailure.reason(failed, null),
                null,
                "post failed: " + e.getMessage(),
                e);
        for (int i = 0; i < n; i++) {
          completeSlot((int) postBatch[i].wrId(), c);
        }
      } finally {
        postLock.unlock();
      }
    }
  }

  private CompletableFuture<Void> usable() {
    if (closed.get() || lost != null) {
      return RemoteGrant.failed(
          ChannelException.Reason.SESSION_CLOSED,
          "session is over" + (lost == null ? "" : ": " + lost.getMessage()));
    }
    WcStatus failure = dataPlaneFailure;
    if (failure != null) {
      return RemoteGrant.failed(
          DataPathFailure.reason(failure, null), "the queue pair failed earlier with " + failure);
    }
    return null;
  }

  private void completeSlot(int slot, ChannelException failure) {
    PendingWrite pw = inflight[slot];
    inflight[slot] = null;
    freeSlots.add(slot);
    if (pw != null) {
      if (failure == null) {
        pw.recordDone();
      } else {
        pw.done.completeExceptionally(failure);
      }
    }
  }

  private void failInflight(ChannelException cause) {
    for (int i = 0; i < inflight.length; i++) {
      PendingWrite pw = inflight[i];
      if (pw != null) {
        pw.done.completeExceptionally(cause);
      }
    }
    CompletableFuture<WcStatus> r = readDone;
    if (r != null) {
      r.completeExceptionally(cause);
    }
  }

  private void poll() {
    WorkCompletion[] wcs = new WorkCompletion[32];
    for (int i = 0; i < wcs.length; i++) {
      wcs[i] = new WorkCompletion();
    }
    Duration wait = Duration.ofMillis(100);
    while (!closed.get()) {
      int n;
      try {
        n = cq.await(wcs, wait);
      } catch (RuntimeException e) {
        if (!closed.get()) {
          LOG.error("{}: completion queue failed", name, e);
        }
        return;
      }
      for (int i = 0; i < n; i++) {
        WorkCompletion wc = wcs[i];
        WcStatus status = wc.status();
        WcStatus first = dataPlaneFailure;
        if (status != WcStatus.SUCCESS && first == null) {
          dataPlaneFailure = status;
        }
        long wrId = wc.wrId();
        if ((wrId & (READ_WR | RAW_WR)) != 0) {
          CompletableFuture<WcStatus> r = readDone;
          if (r != null) {
            r.complete(status);
          }
        } else {
          completeSlot(
              (int) wrId,
              status == WcStatus.SUCCESS ? null : DataPathFailure.of("write", status, first));
        }
      }
    }
  }

  CompletionStage<ByteBuffer> read(RemoteGrant g, long relativeOffset, int sealedLength) {
    CompletableFuture<Void> refused = g.check(Access.READ, relativeOffset, sealedLength);
    if (refused != null) {
      return refused.thenApply(v -> null);
    }
    if (sealedLength < SealedLayout.OWNER_RECORD_OVERHEAD + 1
        || sealedLength > options.maxReadBytes()) {
      return RemoteGrant.failed(
          ChannelException.Reason.INVALID_ARGUMENT,
          "read length must be "
              + (SealedLayout.OWNER_RECORD_OVERHEAD + 1)
              + ".."
              + options.maxReadBytes()
              + ", got "
              + sealedLength);
    }
    if (g.readOpener == null) {
      return RemoteGrant.failed(
          ChannelException.Reason.NOT_PERMITTED, "grant " + g.id() + " carries no region key");
    }
    // A read racing a rotation may see records of a generation whose key is still on its way
    // (REGION_KEY), or a record the owner is re-sealing in place: wait for the key, read again.
    for (int attempt = 1; ; attempt++) {
      CompletableFuture<Void> gone = usable();
      if (gone != null) {
        return gone.thenApply(v -> null);
      }
      int generation = g.regionKeyGeneration();
      ReadAttempt a = readOnce(g, relativeOffset, sealedLength);
      if (a.failure != null) {
        return CompletableFuture.failedFuture(a.failure);
      }
      if (a.result == OpenResult.OK) {
        return CompletableFuture.completedFuture(a.plaintext);
      }
      boolean newer = a.result == OpenResult.UNKNOWN_EPOCH && a.generation > generation;
      boolean torn = a.result == OpenResult.AUTH_FAILED || a.result == OpenResult.BAD_SIGNATURE;
      if (attempt < READ_ATTEMPTS && (newer || torn)) {
        if (newer) {
          try {
            g.regionKeys.awaitNewerThan(
                generation, Duration.ofMillis(Math.min(2000, options.requestTimeout().toMillis())));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return RemoteGrant.failed(ChannelException.Reason.TIMEOUT, "interrupted");
          }
        }
        continue;
      }
      return RemoteGrant.failed(
          ChannelException.Reason.RECORD_REJECTED,
          "record at offset " + a.at + " of grant " + g.id() + ": " + a.result);
    }
  }

  /** Reads of one call: the first, and retries after a rotation raced it. */
  private static final int READ_ATTEMPTS = 3;

  /** The outcome of one RDMA READ and the opening of its records. */
  private record ReadAttempt(
      ChannelException failure, OpenResult result, long at, int generation, ByteBuffer plaintext) {}

  /**
   * One RDMA READ of the range and the opening of the owner records in it, holding the read buffer
   * throughout so no other read overwrites it before it is opened.
   */
  private ReadAttempt readOnce(RemoteGrant g, long relativeOffset, int sealedLength) {
    boolean locked = false;
    try {
      locked = readLock.tryLock(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
      if (!locked) {
        return new ReadAttempt(
            new ChannelException(
                ChannelException.Reason.TIMEOUT, "another read held the read buffer too long"),
            null,
            0,
            0,
            null);
      }
      WcStatus status =
          rawPost(
              WrOpcode.RDMA_READ,
              g.remoteAddress + relativeOffset,
              g.rkey,
              null,
              sealedLength,
              0,
              READ_WR);
      if (status == null) {
        return new ReadAttempt(
            new ChannelException(
                ChannelException.Reason.TIMEOUT,
                "RDMA READ of grant " + g.id() + " got no completion in time"),
            null,
            0,
            0,
            null);
      }
      if (status != WcStatus.SUCCESS) {
        return new ReadAttempt(
            DataPathFailure.of("RDMA READ of grant " + g.id(), status, dataPlaneFailure),
            null,
            0,
            0,
            null);
      }
      ByteBuffer out = ByteBuffer.allocate(sealedLength);
      synchronized (g.readOpener) {
        int pos = 0;
        while (sealedLength - pos > SealedLayout.OWNER_RECORD_OVERHEAD) {
          OpenResult r =
              g.readOpener.open(
                  readBuffer.buffer(),
                  pos,
                  sealedLength - pos,
                  g.offset() + relativeOffset + pos,
                  out);
          if (r != OpenResult.OK) {
            if (pos > 0 && r == OpenResult.MALFORMED) {
              break;
            }
            return new ReadAttempt(
                null, r, relativeOffset + pos, g.readOpener.lastGeneration(), null);
          }
          pos += g.readOpener.lastRecordLength();
        }
      }
      out.flip();
      return new ReadAttempt(null, OpenResult.OK, relativeOffset, 0, out);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new ReadAttempt(
          new ChannelException(ChannelException.Reason.TIMEOUT, "interrupted"), null, 0, 0, null);
    } finally {
      if (locked) {
        readLock.unlock();
      }
    }
  }

  /**
   * Seals one record for {@code relativeOffset} of a grant without sending it: for tests that
   * relocate or tamper with a record whose sequence the host has not seen.
   */
  byte[] sealRecord(RemoteGrant g, long relativeOffset, byte[] payload) {
    ByteBuffer out = ByteBuffer.allocate(payload.length + SealedLayout.RECORD_OVERHEAD);
    int n =
        sealers
            .get()
            .seal(ByteBuffer.wrap(payload), g.writeBinding, g.offset() + relativeOffset, out, 0);
    if (n < 0) {
      throw new ChannelException(ChannelException.Reason.INVALID_ARGUMENT, "seal refused: " + n);
    }
    return out.array();
  }

  /**
   * Posts one raw WRITE_WITH_IMM or READ through the read buffer, without the writer's checks, and
   * waits for its completion: for tests that prove the target refuses what the writer would not
   * send.
   */
  WcStatus rawPost(
      WrOpcode op, long remoteAddress, int rkey, byte[] bytes, int length, int imm, long tag) {
    boolean locked = false;
    try {
      locked = readLock.tryLock(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
      if (!locked) {
        return null;
      }
      if (bytes != null) {
        readBuffer.buffer().put(0, bytes);
      }
      CompletableFuture<WcStatus> done = new CompletableFuture<>();
      readDone = done;
      readRequest
          .wrId(tag | RAW_WR)
          .opcode(op)
          .remote(remoteAddress, rkey)
          .immData(imm)
          .signaled(true);
      readRequest.sgl().set(readBuffer, 0, length);
      qp.postSend(readRequest);
      return done.get(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (ExecutionException e) {
      return WcStatus.WR_FLUSH_ERR;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (VerbsException e) {
      return WcStatus.WR_FLUSH_ERR;
    } finally {
      readDone = null;
      if (locked) {
        readLock.unlock();
      }
    }
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

  /** Device objects of a client, closed in reverse on failure. */
  private static final class Resources {
    DeviceContext context;
    ProtectionDomain pd;
    CompletionQueue cq;
    QueuePair qp;
    MemoryRegion staging;
    MemoryRegion read;

    void open(ClientOptions o) {
      context = RdmaProviders.firstDevice(o.provider()).open(o.device());
      pd = context.allocateProtectionDomain();
      int slots = o.stagingSlots();
      cq = context.createCompletionQueue(slots + 8);
      qp = pd.createQueuePair(new QueuePairAttributes(cq, cq, slots + 4, 1, 1, 1));
      qp.init(0);
      int slotSize = o.maxRecordPayload() + SealedLayout.RECORD_OVERHEAD;
      staging =
          pd.registerMemory(ByteBuffer.allocateDirect(slots * slotSize), AccessFlags.LOCAL_WRITE);
      read =
          pd.registerMemory(ByteBuffer.allocateDirect(o.maxReadBytes()), AccessFlags.LOCAL_WRITE);
    }

    void close(AuthenticatedPeer peer) {
      if (peer != null) {
        try {
          peer.socket().close();
        } catch (IOException ignored) {
          // failing anyway
        }
      }
      for (AutoCloseable c : new AutoCloseable[] {qp, staging, read, cq, pd, context}) {
        if (c != null) {
          try {
            c.close();
          } catch (Exception e) {
            LOG.debug("closing {}: {}", c, e.getMessage());
          }
        }
      }
    }
  }

  /**
   * The next frame; a connection the peer closed between frames is an {@link java.io.EOFException}.
   */
  private static Frame next(FrameReader reader) throws IOException {
    Frame f = reader.read();
    if (f == null) {
      throw new java.io.EOFException("the peer closed the connection");
    }
    return f;
  }
}
