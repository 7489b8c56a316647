package io.srdma.channel;

import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.DenyReason;
import io.srdma.channel.protocol.ErrorCode;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.GrantRequestFlyweight;
import io.srdma.channel.protocol.HelloFlyweight;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Operations;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.protocol.RevokeReason;
import io.srdma.channel.protocol.Side;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordOpener;
import io.srdma.channel.record.RegionKeyMaterial;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.Decision;
import io.srdma.policy.LiveGrant;
import io.srdma.policy.Operation;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One peer's session on the host: authenticates it, runs the key schedule, owns its queue pair (in
 * the tenant's protection domain), answers its requests and opens the records it writes. Its thread
 * reads control frames; the host's receiver thread calls {@link #onReceive}.
 */
final class HostSession implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(HostSession.class);
  static final int SLOTS = 256;
  private static final int VERSION = 1;
  private static final long BIND_WR_ID = 1;
  private static final long INVALIDATE_WR_ID = 2;

  private final RegionHost host;
  private final Socket raw;
  private final InetAddress remote;
  private final long acceptedNanos = System.nanoTime();
  private final AtomicReference<SessionEnd> ending = new AtomicReference<>();
  private final RejectionBudget rejections;
  private final AtomicBoolean watchdogClosed = new AtomicBoolean();
  private volatile SSLSocket socket;
  private volatile long deadlineNanos;
  private volatile long establishedNanos;
  private volatile X509Certificate certificate;
  private String refusalDetail;
  private volatile WatchedOutputStream output;
  private final AuditTrail audit;
  private final HostGrant[] slots = new HostGrant[SLOTS];
  private final Object grantLock = new Object();
  private final Object sendLock = new Object();
  private final AtomicBoolean ended = new AtomicBoolean();
  private final AtomicLong recordsIn = new AtomicLong();
  private final AtomicLong bytesIn = new AtomicLong();
  private final WorkCompletion[] sendCompletion = {new WorkCompletion()};
  private final ReceiveWorkRequest receive = new ReceiveWorkRequest(1);
  private final ReceivedRecord received = new ReceivedRecord();
  private int nextSlot = 1;
  private volatile boolean qpFailed;
  private volatile String identity;
  private volatile String tenant;
  private volatile String hexId = "-";
  private volatile Instant since;
  private RegionHost.TenantDomain domain;
  private CompletionQueue sendCq;
  private QueuePair qp;
  private KeySchedule schedule;
  private RecordOpener opener;
  private ByteBuffer plain;
  private ControlProxy proxy;
  private boolean quotaHeld;
  private int announcedEpoch;
  private AuthenticatedPeer peer;

  HostSession(RegionHost host, Socket raw) {
    this.host = host;
    this.raw = raw;
    this.remote = raw.getInetAddress();
    this.audit = host.audit();
    this.rejections = new RejectionBudget(host.options().maxRejectedRecords());
    this.deadlineNanos = acceptedNanos + host.options().handshakeTimeout().toNanos();
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

  private WatchedOutputStream watched() throws IOException {
    WatchedOutputStream w = new WatchedOutputStream(socket.getOutputStream());
    output = w;
    return w;
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
      if (!authenticate()) {
        return;
      }
      FrameReader reader = new FrameReader(socket.getInputStream(), Side.CLIENT);
      proxy = new ControlProxy(new FrameWriter(watched()));
      establish(reader);
      socket.setSoTimeout((int) host.options().idleTimeout().toMillis());
      why = serve(reader);
    } catch (ProtocolException e) {
      why = "protocol violation: " + e.getMessage();
      host.stats.protocolErrors.increment();
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

  /** First-record deadline, TLS handshake and quota; false when the connection was refused. */
  private boolean authenticate() throws IOException {
    AuthenticatedPeer peer;
    try {
      FirstRecordGate.Outcome first =
          FirstRecordGate.await(raw, host.options().firstRecordTimeout());
      if (first != FirstRecordGate.Outcome.TLS) {
        // idle, or not TLS at all: nothing to audit per connection (nothing authenticated
        // spoke), but the address is limited; a connection closed at once (a TCP health check)
        // held nothing and is not held against its address
        switch (first) {
          case IDLE -> {
            host.stats.handshakeDeadlines.increment();
            host.limiter().failed(remote);
          }
          case NOT_TLS -> {
            host.stats.authFailures.increment();
            host.limiter().failed(remote);
          }
          default -> {}
        }
        return false;
      }
      socket = FirstRecordGate.layer(raw, host.tls());
      peer = host.tls().handshake(socket, host.options().handshakeTimeout());
    } catch (KeyExchangeException e) {
      host.stats.authFailures.increment();
      host.limiter().failed(remote);
      audit.peerAuthenticated(null, null, false, e.reason() + " from " + remote.getHostAddress());
      return false;
    } finally {
      host.handshakeDone(remote);
    }
    certificate = peer.certificate();
    deadlineNanos = System.nanoTime() + host.options().handshakeTimeout().toNanos();
    identity = peer.identity().toUri();
    tenant = peer.identity().tenant();
    if (!host.reserveSession(tenant)) {
      host.stats.quotaRefusals.increment();
      audit.accessViolation(identity, tenant, null, 0, 0, "session quota exceeded");
      proxy = new ControlProxy(new FrameWriter(watched()));
      sendError(ErrorCode.QUOTA_EXCEEDED, "session quota of tenant " + tenant + " reached");
      return false;
    }
    quotaHeld = true;
    this.peer = peer;
    return true;
  }

  private void establish(FrameReader reader) throws IOException {
    socket.setSoTimeout((int) host.options().handshakeTimeout().toMillis());
    Frame helloFrame = next(reader).expect(MessageType.HELLO);
    HelloFlyweight hello = helloFrame.hello();
    if (hello.maxVersion() < VERSION) {
      throw new ProtocolException(
          ProtocolException.Reason.UNSUPPORTED_VERSION,
          "client's highest version " + hello.maxVersion() + " is below " + VERSION);
    }
    ConnectionInfo clientInfo = hello.connectionInfo();
    String forged = host.responderAddresses().refusal(clientInfo, remote);
    if (forged != null) {
      // refused from the bytes alone, before any connection attempt: the same frame and timing
      // whatever listens at the named address
      host.stats.responderRefusals.increment();
      refusalDetail = forged;
      throw new ProtocolException(ProtocolException.Reason.BAD_VALUE, forged);
    }
    byte[] clientKey = hello.publicKey();
    int shared = Capabilities.shared(hello.capabilities());
    domain = host.domain(tenant);
    sendCq = host.context().createCompletionQueue(16);
    int depth = host.receiveDepth();
    qp =
        domain.pd.createQueuePair(
            new QueuePairAttributes(sendCq, host.receiveQueue(), 16, depth, 1, 1));
    qp.init(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
    for (int i = 0; i < depth; i++) {
      qp.postReceive(receive.wrId(i));
    }
    plain = ByteBuffer.allocate(host.options().maxRecordPayload());
    byte[] sessionId = new byte[16];
    host.random().nextBytes(sessionId);
    hexId = HexFormat.of().formatHex(sessionId);
    try (X25519KeyPair local = X25519KeyPair.generate(host.random());
        TlsBinding binding = peer.binding(Role.RESPONDER, Capabilities.bindingKind(shared))) {
      byte[] publicKey = local.publicKey();
      schedule =
          KeySchedule.builder()
              .role(Role.RESPONDER)
              .localKey(local)
              .peerPublicKey(clientKey)
              .binding(binding)
              .sessionId(sessionId)
              .initiatorQpn(clientInfo.qpn())
              .responderQpn(qp.qpn())
              .establish();
      proxy.helloAck(helloFrame.requestId(), VERSION, shared, publicKey, sessionId, qp.localInfo());
    }
    Frame confirm = next(reader).expect(MessageType.KEY_CONFIRM);
    if (confirm.keyConfirm().epoch() != 0) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE, "first key confirmation must be for epoch 0");
    }
    schedule.current().verifyPeerConfirmation(confirm.keyConfirm().confirmation());
    opener = RecordOpener.forSchedule(schedule, host.options().maxRecordPayload());
    host.attach(qp.qpn(), this);
    qp.readyToReceive(clientInfo);
    qp.readyToSend();
    proxy.keyConfirm(0, 0, schedule.current().confirmation());
    since = Instant.now();
    establishedNanos = System.nanoTime();
    deadlineNanos = 0;
    host.stats.sessionsOpened.increment();
    audit.peerAuthenticated(identity, tenant, true, "session " + hexId);
    LOG.info(
        "session {} established: {} (QP 0x{})", hexId, identity, Integer.toHexString(qp.qpn()));
  }

  private String serve(FrameReader reader) throws IOException {
    while (!ended.get()) {
      Frame f = next(reader);
      switch (f.type()) {
        case GRANT_REQUEST -> grantRequest(f);
        case RELEASE -> release(f);
        case REKEY -> rekey(f);
        case PING -> proxy.pong(f.requestId(), f.ping().payload());
        case PONG -> {}
        case CLOSE -> {
          proxy.close(0);
          return "closed by the peer";
        }
        case ERROR -> {
          return "peer sent ERROR " + f.error().code();
        }
        default ->
            throw new ProtocolException(
                ProtocolException.Reason.UNEXPECTED_TYPE, f.type() + " is not expected now");
      }
    }
    return "ended by the host";
  }

  private void grantRequest(Frame f) throws IOException {
    GrantRequestFlyweight req = f.grantRequest();
    String region = req.region();
    int ops = req.operations();
    Set<Operation> operations = EnumSet.noneOf(Operation.class);
    if (Operations.includesRead(ops)) {
      operations.add(Operation.READ);
    }
    if ((ops & Operations.WRITE) != 0) {
      operations.add(Operation.WRITE);
    }
    long offset = req.offset();
    long length = req.length();
    Duration ttl = Duration.ofMillis(req.ttlMillis());
    SessionEnd because = ending.get();
    if (because != null) {
      // the host is ending this session (certificate revoked or expired, lifetime, rejections):
      // its end may wait on the watchdog thread behind other sessions' ends; nothing new meanwhile
      deny(f, DenyReason.NOT_PERMITTED, "the session is ending: " + because.token());
      return;
    }
    int slot = reserveSlot();
    if (slot < 0) {
      deny(f, DenyReason.RESOURCE_EXHAUSTED, "this session holds " + (SLOTS - 1) + " grants");
      return;
    }
    long id = ((host.random().nextLong() >>> 9) << 8) | slot;
    Decision d =
        host.authority()
            .issue(Long.toString(id), identity, tenant, region, operations, offset, length, ttl);
    if (!d.allowed()) {
      freeSlot(slot);
      audit.decided(d);
      deny(f, DenyReason.valueOf(d.reason().name()), d.detail());
      return;
    }
    HostedRegion hosted = host.hostedRegion(tenant, region);
    if (hosted == null || offset + length > hosted.size()) {
      host.authority().release(Long.toString(id));
      freeSlot(slot);
      String why =
          hosted == null
              ? "region " + region + " is not registered on this host"
              : "range ends at "
                  + (offset + length)
                  + ", past the "
                  + hosted.size()
                  + " bytes registered";
      audit.decided(denied(d, why));
      deny(f, hosted == null ? DenyReason.REGION_UNAVAILABLE : DenyReason.OUT_OF_BOUNDS, why);
      return;
    }
    LiveGrant live =
        new LiveGrant(
            Long.toString(id),
            identity,
            tenant,
            region,
            operations,
            offset,
            length,
            d.effectiveTtl(),
            Instant.now(),
            d.role());
    HostGrant grant;
    try {
      grant = scope(id, slot, live, hosted);
    } catch (VerbsException e) {
      host.authority().release(Long.toString(id));
      freeSlot(slot);
      LOG.warn("grant {} for {} could not be scoped: {}", id, identity, e.getMessage());
      deny(f, DenyReason.RESOURCE_EXHAUSTED, "the device could not scope the grant");
      return;
    }
    SessionEnd endedMeanwhile;
    synchronized (grantLock) {
      // checked under the lock the host's end takes to list live grants: either that list holds
      // this grant (and the end revokes it) or the end is seen here and nothing is granted
      endedMeanwhile = ending.get();
      if (endedMeanwhile == null) {
        slots[slot] = grant;
      }
    }
    if (endedMeanwhile != null) {
      host.authority().release(Long.toString(id));
      freeSlot(slot);
      if (grant.window != null) {
        grant.window.close(); // its R_Key was never sent: nobody can have used it
      } else {
        grant.scopedRegion.close();
      }
      deny(f, DenyReason.NOT_PERMITTED, "the session is ending: " + endedMeanwhile.token());
      return;
    }
    hosted.liveGrants.incrementAndGet();
    host.grantIssued(grant);
    audit.granted(d, Long.toString(id));
    long delay = Duration.between(Instant.now(), live.expiresAt()).toMillis();
    // on the watchdog thread, which never writes to a peer: a peer that stops reading blocks the
    // REVOKE write (sent from the timer), never another grant's invalidation at its expiry
    grant.expiry =
        host.watchdog().schedule(() -> expire(grant), Math.max(0, delay), TimeUnit.MILLISECONDS);
    boolean reader = operations.contains(Operation.READ);
    byte[] key = reader ? hosted.regionKeyMaterial() : new byte[0];
    int keyGeneration = reader ? RegionKeyMaterial.generation(key) : 0;
    boolean endedBeforeSent;
    synchronized (grantLock) {
      // endGrant marks the grant ended before it rotates the region key: a grant revoked (or
      // expired) before the key was taken is seen here, so its GRANT never carries a key that was
      // made after its end; one revoked after this point gets the key its end then replaces
      endedBeforeSent = grant.ended;
    }
    if (endedBeforeSent) {
      java.util.Arrays.fill(key, (byte) 0);
      deny(f, DenyReason.NOT_PERMITTED, "the grant was revoked before it was issued");
      return;
    }
    try {
      proxy.grant(
          f.requestId(),
          id,
          region,
          ops,
          offset,
          length,
          live.expiresAt().toEpochMilli(),
          grant.remoteAddress,
          grant.rkey,
          key);
    } finally {
      java.util.Arrays.fill(key, (byte) 0);
    }
    if (reader) {
      hosted.addReader(grant, keyGeneration); // sends REGION_KEY if the key rotated meanwhile
    }
  }

  /** A grant's TTL passed (watchdog thread): invalidate now, tell the holder from the timer. */
  private void expire(HostGrant grant) {
    if (!endGrant(grant, RevokeReason.EXPIRED, AuditTrail.SYSTEM, false, 0)) {
      return;
    }
    try {
      host.timer().execute(() -> tellRevoked(grant, RevokeReason.EXPIRED));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // the host is closing: the session ends anyway
    }
  }

  /** Sends REVOKE for an ended grant (may block on a peer that does not read). */
  void tellRevoked(HostGrant g, RevokeReason reason) {
    if (proxy != null && !ended.get()) {
      try {
        proxy.revoke(0, g.id, reason);
      } catch (IOException e) {
        LOG.debug("could not tell {} of revocation: {}", identity, e.getMessage());
      }
    }
  }

  /**
   * Sends the holder of READ grant {@code g} the region's new key (REGION_KEY) and wipes {@code
   * material}. Any thread; a session that ended or is being ended by the host, or a grant that
   * ended, gets nothing.
   */
  void sendRegionKey(HostGrant g, int generation, byte[] material) {
    try {
      // a session the host is ending (certificate revoked…) gets no key it did not have
      if (proxy != null && !ended.get() && ending.get() == null && !g.ended) {
        proxy.regionKey(g.id, generation, material);
      }
    } catch (IOException e) {
      LOG.debug("could not send {} the new region key: {}", identity, e.getMessage());
    } finally {
      java.util.Arrays.fill(material, (byte) 0);
    }
  }

  private static Decision denied(Decision d, String why) {
    return new Decision(
        io.srdma.policy.DecisionReason.OUT_OF_BOUNDS,
        why,
        d.identity(),
        d.tenant(),
        d.region(),
        d.operations(),
        d.offset(),
        d.length(),
        d.effectiveTtl(),
        d.role(),
        d.permission(),
        d.maxLiveGrants(),
        d.policySha256());
  }

  private HostGrant scope(long id, int slot, LiveGrant live, HostedRegion hosted) {
    int rights =
        (live.operations().contains(Operation.READ) ? AccessFlags.REMOTE_READ : 0)
            | (live.operations().contains(Operation.WRITE) ? AccessFlags.REMOTE_WRITE : 0);
    if (host.scopedByRegion()) {
      ByteBuffer slice = hosted.memory().slice((int) live.offset(), (int) live.length());
      MemoryRegion mr = domain.pd.registerMemory(slice, AccessFlags.LOCAL_WRITE | rights);
      return new HostGrant(id, slot, live, hosted, this, null, mr, mr.address(), mr.rkey());
    }
    MemoryWindow window = domain.pd.allocateMemoryWindow();
    long address = hosted.registration().address() + live.offset();
    try {
      WcStatus status;
      synchronized (sendLock) {
        qp.postSend(
            new SendWorkRequest(1)
                .wrId(BIND_WR_ID)
                .bind(window, hosted.registration(), address, live.length(), rights));
        status = awaitSend(BIND_WR_ID);
      }
      if (status != WcStatus.SUCCESS) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT, "bind_mw", "bind completed with " + status);
      }
    } catch (RuntimeException e) {
      window.close();
      throw e;
    }
    return new HostGrant(id, slot, live, hosted, this, window, null, address, window.rkey());
  }

  /** Waits for the send completion of {@code wrId}; caller holds sendLock. */
  private WcStatus awaitSend(long wrId) {
    long deadline = System.nanoTime() + host.options().requestTimeout().toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return null;
      }
      int n = sendCq.await(sendCompletion, Duration.ofNanos(left));
      if (n == 1 && sendCompletion[0].wrId() == wrId) {
        return sendCompletion[0].status();
      }
    }
  }

  private void release(Frame f) throws IOException {
    long id = f.release().grantId();
    HostGrant g = grantById(id);
    if (g != null && g.live.operations().contains(Operation.WRITE)) {
      // records the peer wrote before its RELEASE (their writes completed) may still sit in the
      // receive queue: open them while the grant is live, or they are refused as naming an ended
      // grant and audited as a violation of an honest peer (as on CLOSE, see end)
      host.drainReceives(host.options().requestTimeout());
    }
    if (g == null || !endGrant(g, RevokeReason.RELEASED, identity, true, f.requestId())) {
      proxy.revoke(f.requestId(), id, RevokeReason.RELEASED);
    }
  }

  /**
   * The client announces a new epoch. Its records of that epoch open at once (the key schedule
   * looks one epoch ahead); the receiver moves the schedule forward when it opens the first of
   * them, so records of the old epoch that are still in flight behind the announcement keep
   * opening: the control connection and the queue pair are not ordered with each other.
   */
  private void rekey(Frame f) throws IOException {
    int epoch = f.rekey().epoch();
    if (epoch != announcedEpoch + 1) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE,
          "REKEY to epoch " + epoch + " does not follow " + announcedEpoch);
    }
    announcedEpoch = epoch;
    proxy.rekey(f.requestId(), epoch);
  }

  private HostGrant grantById(long id) {
    int slot = (int) (id & 0xff);
    synchronized (grantLock) {
      HostGrant g = slots[slot];
      return g != null && g.id == id && !g.ended ? g : null;
    }
  }

  private int reserveSlot() {
    synchronized (grantLock) {
      for (int i = 0; i < SLOTS - 1; i++) {
        int s = nextSlot;
        nextSlot = nextSlot == SLOTS - 1 ? 1 : nextSlot + 1;
        if (slots[s] == null || slots[s].ended) {
          slots[s] = null;
          return s;
        }
      }
      return -1;
    }
  }

  private void freeSlot(int slot) {
    synchronized (grantLock) {
      slots[slot] = null;
    }
  }

  List<HostGrant> liveGrants() {
    List<HostGrant> out = new ArrayList<>();
    synchronized (grantLock) {
      for (HostGrant g : slots) {
        if (g != null && !g.ended) {
          out.add(g);
        }
      }
    }
    return out;
  }

  /**
   * Ends a grant: invalidates its window (or deregisters its region) first, so the RNIC refuses any
   * later access, then releases it in the policy, audits and tells the client.
   *
   * @return false when it had already ended
   */
  boolean endGrant(HostGrant g, RevokeReason reason, String actor, boolean notify, int requestId) {
    synchronized (grantLock) {
      if (g.ended) {
        return false;
      }
      g.ended = true;
      if (slots[g.slot] == g) {
        slots[g.slot] = null; // a notification naming this slot now finds no grant
      }
    }
    if (g.expiry != null) {
      g.expiry.cancel(false);
    }
    try {
      if (g.window != null) {
        synchronized (sendLock) {
          try {
            if (!qpFailed) {
              qp.postSend(new SendWorkRequest(1).wrId(INVALIDATE_WR_ID).localInvalidate(g.rkey));
              awaitSend(INVALIDATE_WR_ID);
            }
          } catch (VerbsException e) {
            LOG.debug("LOCAL_INV of grant {}: {}", g.id, e.getMessage());
          } finally {
            g.window.close();
          }
        }
      } else {
        g.scopedRegion.close();
      }
    } finally {
      g.region.liveGrants.decrementAndGet();
      if (g.live.operations().contains(Operation.READ)) {
        g.region.readerEnded(g); // new region key: the holder must not open what comes next
      }
      LiveGrant live = host.authority().release(Long.toString(g.id)).orElse(g.live);
      host.grantEnded(g);
      SessionEnd because = ending.get();
      audit.revoked(
          live,
          actor,
          because != null && reason == RevokeReason.SESSION_ENDING
              ? because.token()
              : reason.name().toLowerCase(java.util.Locale.ROOT));
    }
    if (notify && proxy != null && !ended.get()) {
      try {
        proxy.revoke(requestId, g.id, reason);
      } catch (IOException e) {
        LOG.debug("could not tell {} of revocation: {}", identity, e.getMessage());
      }
    }
    return true;
  }

  /** A receive completion for this session's queue pair (host receiver thread). */
  void onReceive(WorkCompletion wc) {
    if (wc.status() != WcStatus.SUCCESS) {
      if (!qpFailed && !ended.get()) {
        qpFailed = true;
        host.stats.remoteAccessErrors.increment();
        // The receive side sees only the flush: a refused access by the peer and a broken data
        // path (peer gone, link down) look alike here, so the line names both.
        violation(
            "queue pair entered ERROR ("
                + wc.status()
                + "): the RNIC refused an access by the peer, or the data path broke");
        host.timer().execute(() -> terminate("queue pair in error"));
      }
      return;
    }
    try {
      if (ending.get() != null) {
        // the host is ending this session (certificate revoked, too many rejections…): nothing
        // more of it is opened or delivered, even what is already queued
        host.stats.recordsRejected.increment();
        return;
      }
      if (wc.opcode() != WcOpcode.RECV_RDMA_WITH_IMM) {
        reject(null, 0, wc.byteLength(), "unexpected " + wc.opcode() + " from the peer");
        return;
      }
      int imm = wc.immData();
      int slot = imm >>> 24;
      HostGrant g;
      synchronized (grantLock) {
        g = slots[slot];
        if (g != null && g.ended) {
          g = null; // ended grants clear their slot; this only closes the window of that race
        }
      }
      if (g == null) {
        host.stats.staleNotifications.increment();
        reject(
            null,
            0,
            wc.byteLength(),
            "write notification names no live grant (slot "
                + slot
                + " is free or its grant ended)");
        return;
      }
      long offset = g.live.offset() + (imm & 0xffffffL) * g.unit;
      long space = Math.min(wc.byteLength(), g.end() - offset);
      if (offset >= g.end() || space < 0) {
        reject(g, offset, wc.byteLength(), "notified offset is outside the grant");
        return;
      }
      plain.clear();
      OpenResult r =
          opener.open(g.region.memory(), (int) offset, (int) space, g.binding, offset, plain);
      if (r != OpenResult.OK) {
        reject(g, offset, space, "record " + r);
        return;
      }
      plain.flip();
      if (opener.lastEpoch() > schedule.epoch()) {
        schedule.rekey();
      }
      recordsIn.incrementAndGet();
      bytesIn.addAndGet(plain.remaining());
      host.stats.recordsOpened.increment();
      host.stats.bytesOpened.add(plain.remaining());
      RecordListener l = g.region.listener();
      if (l != null) {
        try {
          l.onRecord(
              received.set(
                  identity, tenant, g.region.name(), g.id, offset, plain.asReadOnlyBuffer()));
        } catch (RuntimeException e) {
          LOG.warn("record listener of {}/{} failed", tenant, g.region.name(), e);
        }
      }
    } finally {
      repost(wc.wrId());
    }
  }

  private void repost(long wrId) {
    if (!ended.get() && !qpFailed) {
      try {
        qp.postReceive(receive.wrId(wrId));
      } catch (VerbsException e) {
        LOG.debug("repost on session {}: {}", hexId, e.getMessage());
      }
    }
  }

  /**
   * Counts a rejected record or notification; audits only the first few of a session, and ends the
   * session (once, audited once) when its budget is spent.
   */
  private void reject(HostGrant g, long offset, long length, String why) {
    host.stats.recordsRejected.increment();
    switch (rejections.reject()) {
      case AUDIT ->
          audit.accessViolation(
              identity,
              tenant,
              g == null ? null : g.region.name(),
              offset,
              Math.max(0, length),
              why
                  + (rejections.count() == RejectionBudget.AUDITED
                      ? "; further rejections of this session are counted, not audited"
                      : ""));
      case END -> endByHost(SessionEnd.REJECTED_RECORDS);
      case QUIET, SPENT -> {}
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
      host.watchdog().execute(() -> finishEndByHost(why));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      closeConnection(); // the host is closing: its close() ends the session anyway
    }
    return true;
  }

  private void finishEndByHost(SessionEnd why) {
    host.stats.sessionsTerminated.increment();
    LOG.info("ending session {} of {}: {}", hexId, identity, why.token());
    // grants first, so the RNIC refuses the peer before anything else happens
    for (HostGrant g : liveGrants()) {
      endGrant(g, RevokeReason.SESSION_ENDING, AuditTrail.SYSTEM, false, 0);
    }
    if (why == SessionEnd.REJECTED_RECORDS) {
      // counts as a failure of the address: a peer that reconnects to flood again is refused
      // after authFailuresPerMinute such ends, so audit lines stay bounded across sessions too
      host.limiter().failed(remote);
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

  private void violation(String why) {
    audit.accessViolation(identity, tenant, null, 0, 0, why);
  }

  private void refuse(ProtocolException e) {
    violation(
        "protocol violation: "
            + e.reason()
            + (refusalDetail == null ? "" : " (" + refusalDetail + ")"));
    if (proxy != null) {
      try {
        proxy.error(e);
      } catch (IOException ignored) {
        // the peer is gone; the session ends anyway
      }
    }
  }

  private void sendError(ErrorCode code, String text) {
    if (proxy != null) {
      try {
        proxy.error(0, code, text);
      } catch (IOException ignored) {
        // the peer is gone; the session ends anyway
      }
    }
  }

  private void deny(Frame f, DenyReason reason, String text) throws IOException {
    host.stats.denials.increment();
    String safe = text == null ? "" : text;
    proxy.grantDenied(f.requestId(), reason, safe.length() > 1000 ? safe.substring(0, 1000) : safe);
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
    if (qp != null) {
      if (ending.get() == null) {
        // records the peer wrote before its CLOSE may still sit in the receive queue: open them
        host.drainReceives(host.options().requestTimeout());
      }
      host.detach(qp.qpn());
    }
    for (HostGrant g : liveGrants()) {
      endGrant(g, RevokeReason.SESSION_ENDING, AuditTrail.SYSTEM, false, 0);
    }
    SSLSocket tls = socket;
    if (proxy != null && tls != null && !tls.isClosed()) {
      try {
        proxy.close(0);
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
    if (qp != null) {
      qp.close();
    }
    if (sendCq != null) {
      sendCq.close();
    }
    if (schedule != null) {
      schedule.close();
    }
    if (quotaHeld) {
      host.releaseSession(tenant);
    }
    host.sessionEnded(this);
    if (since != null) {
      LOG.info("session {} of {} ended: {}", hexId, identity, why);
    }
  }

  boolean isEstablished() {
    return since != null && !ended.get();
  }

  SessionInfo info() {
    return new SessionInfo(
        hexId,
        identity,
        tenant,
        since,
        schedule == null ? 0 : schedule.epoch(),
        recordsIn.get(),
        bytesIn.get(),
        liveGrants().size());
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
