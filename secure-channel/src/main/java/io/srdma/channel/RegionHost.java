package io.srdma.channel;

import io.srdma.channel.protocol.RevokeReason;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.Region;
import io.srdma.policy.ReloadResult;
import io.srdma.policy.Tenant;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host side of secure-rdma: registers tenants' regions, accepts tenant peers over mutual TLS
 * 1.3, runs the session key schedule, grants scoped, expiring, revocable rkeys through the access
 * policy, opens the sealed records peers write, and audits all of it.
 *
 * <pre>{@code
 * try (RegionHost host = RegionHost.start(new HostOptions()
 *     .credential(serverCredential).trust(trust).policy(policy).audit(auditTrail))) {
 *   HostedRegion kv = host.registerRegion("acme", "kvcache", 1 << 20);
 *   kv.onRecord(r -> store(r.offset(), r.payload()));
 *   ...
 * }
 * }</pre>
 *
 * <p>Threads: one acceptor, one per session (control frames), one receiver (opens records), one
 * timer (REVOKE notices of expiries, key rotations, endings), one watchdog ({@link
 * SessionWatchdog}: trust, lifetime, deadlines, grant expiries; never writes to a peer). All are
 * named {@code srdma-host-*} and stopped by {@link #close}.
 *
 * <p>Thread safety: thread-safe; any thread may register regions, query, revoke or close. Buffers:
 * the host allocates and owns every region's memory ({@link HostedRegion}) and frees it when it
 * closes.
 */
public final class RegionHost implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RegionHost.class);
  private static final AtomicInteger HOSTS = new AtomicInteger();

  /**
   * The tenant part of every host's identity ({@code srdma://host/<name>}): clients accept only a
   * server whose certificate says it is a host, so a tenant peer cannot pose as one.
   */
  public static final String HOST_TENANT = "host";

  final Stats stats = new Stats();
  private final HostOptions options;
  private final MutualTls tls;
  private final GrantAuthority authority;
  private final AuditTrail audit;
  private final DeviceContext context;
  private final CompletionQueue receiveQueue;
  private final int receiveDepth;
  private final boolean scopedByRegion;
  private final ServerSocket server;
  private final SecureRandom random = new SecureRandom();
  private final AuthFailureLimiter limiter;
  private final PendingHandshakes handshakes;
  private final ResponderAddresses responderAddresses;
  private final ScheduledExecutorService timer;
  private final ScheduledExecutorService watchdog;
  private final Thread acceptor;
  private final Thread receiver;
  private final Map<String, TenantDomain> domains = new ConcurrentHashMap<>();
  private final Map<String, HostedRegion> regions = new ConcurrentHashMap<>();
  private final Map<Integer, HostSession> byQpn = new ConcurrentHashMap<>();
  private final Map<HostSession, Thread> sessions = new ConcurrentHashMap<>();
  private final Map<Long, HostGrant> grants = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> sessionsPerTenant = new ConcurrentHashMap<>();
  private final AtomicInteger sessionCount = new AtomicInteger();
  private final java.util.concurrent.atomic.AtomicLong drained =
      new java.util.concurrent.atomic.AtomicLong();
  private final String name;
  private volatile boolean closed;

  private RegionHost(HostOptions o) throws IOException {
    this.options = o;
    this.name = "srdma-host-" + HOSTS.incrementAndGet();
    PeerIdentity self = PeerIdentity.fromCertificate(o.credential().certificate());
    if (!HOST_TENANT.equals(self.tenant())) {
      throw HostOptions.invalid(
          "the host's certificate must name srdma://" + HOST_TENANT + "/<name>, not " + self);
    }
    this.tls = MutualTls.server(o.credential(), o.trust());
    this.authority = new GrantAuthority(o.policy());
    this.audit = o.audit();
    this.limiter = new AuthFailureLimiter(o.authFailuresPerMinute(), System::nanoTime);
    this.handshakes =
        new PendingHandshakes(o.maxPendingHandshakes(), o.maxPendingHandshakesPerAddress());
    this.context = RdmaProviders.firstDevice(o.provider()).open(o.device());
    this.responderAddresses =
        new ResponderAddresses(
            context.device().providerName(), o.trustHelloAddress(), o.allowedResponderAddresses());
    if (o.trustHelloAddress()) {
      LOG.warn(
          "{}: trustHelloAddress is set: the host connects to whatever responder address a peer"
              + " names (request forgery is possible)",
          name);
    }
    DeviceAttributes attributes = context.queryDevice();
    boolean ok = false;
    CompletionQueue cq = null;
    try {
      scopedByRegion =
          switch (o.scoping()) {
            case REGION -> true;
            case WINDOW -> false;
            case AUTO -> !(attributes.memoryWindowType2() && attributes.windowBoundsEnforced());
          };
      LOG.info(
          "{}: grants are scoped by {} ({}: type-2 windows {}, window bounds {})",
          name,
          scopedByRegion ? "per-grant memory regions" : "type-2 memory windows",
          context.device().name(),
          attributes.memoryWindowType2() ? "supported" : "unsupported",
          attributes.windowBoundsEnforced() ? "enforced" : "NOT enforced");
      int cqCapacity = Math.min(attributes.maxCqe(), 1 << 18);
      receiveDepth =
          Math.max(
              1,
              Math.min(
                  o.receiveDepth(), Math.min(attributes.maxQpWr(), cqCapacity / o.maxSessions())));
      cq =
          context.createCompletionQueue(
              Math.max(receiveDepth, Math.min(cqCapacity, receiveDepth * o.maxSessions())));
      receiveQueue = cq;
      server = listen(o.bind());
      timer =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, name + "-timer");
                t.setDaemon(true);
                return t;
              });
      watchdog =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, name + "-watchdog");
                t.setDaemon(true);
                return t;
              });
      receiver = new Thread(this::receive, name + "-receiver");
      receiver.setDaemon(true);
      acceptor = new Thread(this::accept, name + "-acceptor");
      acceptor.setDaemon(true);
      ok = true;
    } finally {
      if (!ok) {
        // children first, or closing the context fails and hides why the start failed
        if (cq != null) {
          cq.close();
        }
        context.close();
      }
    }
  }

  /**
   * Starts a host: opens the device, binds the control-plane port, starts its threads.
   *
   * @throws ChannelException {@code INVALID_ARGUMENT} for bad options, {@code CONNECT_FAILED} when
   *     the port cannot be bound
   */
  public static RegionHost start(HostOptions options) {
    options.check();
    io.srdma.channel.record.CipherWarmup.start();
    RegionHost host;
    try {
      host = new RegionHost(options);
    } catch (IOException e) {
      throw new ChannelException(
          ChannelException.Reason.CONNECT_FAILED,
          null,
          "cannot listen on " + options.bind() + ": " + e.getMessage(),
          e);
    }
    host.receiver.start();
    host.acceptor.start();
    long period = SessionWatchdog.PERIOD.toMillis();
    java.util.concurrent.ScheduledFuture<?> unused =
        host.watchdog.scheduleAtFixedRate(
            new SessionWatchdog(
                host,
                options.trust(),
                options.maxSessionLifetime(),
                options.requestTimeout(),
                () -> host.sessions.keySet()),
            period,
            period,
            TimeUnit.MILLISECONDS);
    LOG.info("{} listening on {}", host.name, host.address());
    return host;
  }

  /**
   * A plain TCP listener: TLS is layered over each connection only after its first byte arrived
   * (see {@link FirstRecordGate}), so an idle connection costs a short deadline, not a handshake.
   */
  private static ServerSocket listen(InetSocketAddress address) throws IOException {
    ServerSocket s = new ServerSocket();
    try {
      s.setReuseAddress(true);
      s.bind(address, 128);
      return s;
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
  }

  /** The control-plane address clients connect to. */
  public InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  /** Whether grants are scoped by per-grant memory regions (the device does not bound windows). */
  public boolean scopedByRegion() {
    return scopedByRegion;
  }

  /**
   * Registers {@code size} bytes for a region of the policy, in the tenant's protection domain.
   *
   * @throws ChannelException {@code INVALID_ARGUMENT} when the policy has no such region, the size
   *     exceeds the policy's or 2 GiB, or the region is registered already
   */
  public HostedRegion registerRegion(String tenant, String region, long size) {
    Tenant t = authority.policy().tenants().get(tenant);
    Region r = t == null ? null : t.regions().get(region);
    if (r == null) {
      throw HostOptions.invalid("the policy has no region " + tenant + "/" + region);
    }
    if (size < 1 || size > r.size() || size > Integer.MAX_VALUE - 8) {
      throw HostOptions.invalid(
          "size of "
              + tenant
              + "/"
              + region
              + " must be 1.."
              + Math.min(r.size(), Integer.MAX_VALUE - 8)
              + ", got "
              + size);
    }
    String key = tenant + "/" + region;
    synchronized (regions) {
      if (regions.containsKey(key)) {
        throw HostOptions.invalid(key + " is registered already");
      }
      ByteBuffer memory = ByteBuffer.allocateDirect((int) size);
      MemoryRegion mr =
          domain(tenant).pd.registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
      HostedRegion hosted =
          new HostedRegion(
              tenant,
              region,
              memory,
              mr,
              options.maxRecordPayload(),
              timer,
              options.regionKeyRotation());
      regions.put(key, hosted);
      return hosted;
    }
  }

  /** The regions registered. */
  public List<HostedRegion> regions() {
    return List.copyOf(regions.values());
  }

  /** Established sessions. */
  public List<SessionInfo> sessions() {
    List<SessionInfo> out = new ArrayList<>();
    for (HostSession s : sessions.keySet()) {
      if (s.isEstablished()) {
        out.add(s.info());
      }
    }
    return out;
  }

  /** Live grants. */
  public List<GrantInfo> grants() {
    List<GrantInfo> out = new ArrayList<>();
    for (HostGrant g : grants.values()) {
      out.add(g.info());
    }
    return out;
  }

  /**
   * Revokes a grant now: its window is invalidated before this returns, so the holder's next access
   * fails with a remote access error; the holder is told.
   *
   * @param actor who revokes (audited)
   * @return false when no such grant is live
   */
  public boolean revoke(long grantId, String actor) {
    HostGrant g = grants.get(grantId);
    return g != null && g.session.endGrant(g, RevokeReason.REVOKED, actor, true, 0);
  }

  /**
   * Replaces the policy atomically; live grants the new policy forbids are revoked (and their
   * holders told).
   *
   * @throws io.srdma.policy.PolicyException when the new policy is refused; the old one stays
   */
  public ReloadResult reloadPolicy(Policy next, String actor) {
    ReloadResult r = authority.reload(next);
    audit.reloaded(r, actor);
    // every forbidden grant is invalidated before any holder is told: telling one that stopped
    // reading blocks until the watchdog closes it, and must not keep another's grant usable
    List<HostGrant> ended = new ArrayList<>();
    for (ReloadResult.ForbiddenGrant f : r.forbidden()) {
      try {
        HostGrant g = grants.get(Long.parseLong(f.grant().id()));
        if (g != null && g.session.endGrant(g, RevokeReason.POLICY_CHANGED, actor, false, 0)) {
          ended.add(g);
        }
      } catch (NumberFormatException e) {
        LOG.warn("forbidden grant with foreign id {}", f.grant().id());
      }
    }
    for (HostGrant g : ended) {
      g.session.tellRevoked(g, RevokeReason.POLICY_CHANGED);
    }
    return r;
  }

  /** The policy in force. */
  public Policy policy() {
    return authority.policy();
  }

  /** Counters since start. */
  public HostStats stats() {
    return new HostStats(
        (int) sessions.keySet().stream().filter(HostSession::isEstablished).count(),
        grants.size(),
        stats.sessionsOpened.sum(),
        stats.authFailures.sum(),
        stats.rateLimited.sum(),
        stats.quotaRefusals.sum(),
        stats.grantsIssued.sum(),
        stats.denials.sum(),
        stats.revocations.sum(),
        stats.recordsOpened.sum(),
        stats.bytesOpened.sum(),
        stats.recordsRejected.sum(),
        stats.remoteAccessErrors.sum(),
        stats.protocolErrors.sum(),
        stats.staleNotifications.sum(),
        stats.sessionsTerminated.sum(),
        stats.handshakeDeadlines.sum(),
        stats.responderRefusals.sum());
  }

  /** Stops accepting, ends every session (revoking its grants), frees the device. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    synchronized (drained) {
      drained.notifyAll(); // sessions waiting in drainReceives stop waiting: no receiver soon
    }
    try {
      server.close();
    } catch (IOException e) {
      LOG.debug("closing listener: {}", e.getMessage());
    }
    join(acceptor);
    watchdog.shutdownNow();
    try {
      if (!watchdog.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("{}-watchdog did not stop within 10 s", name);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (HostSession s : sessions.keySet()) {
      s.terminate("host shutting down");
    }
    for (Thread t : sessions.values()) {
      join(t);
    }
    timer.shutdownNow();
    join(receiver);
    for (HostedRegion r : regions.values()) {
      r.close();
    }
    regions.clear();
    for (TenantDomain d : domains.values()) {
      d.pd.close();
    }
    domains.clear();
    receiveQueue.close();
    context.close();
    LOG.info("{} closed", name);
  }

  private static void join(Thread t) {
    try {
      t.join(10_000);
      if (t.isAlive()) {
        LOG.warn("{} did not stop within 10 s", t.getName());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void accept() {
    int n = 0;
    while (!closed) {
      Socket socket;
      try {
        socket = server.accept();
      } catch (SocketException e) {
        return;
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("{}: accept failed: {}", name, e.getMessage());
        }
        continue;
      }
      InetAddress from = socket.getInetAddress();
      if (limiter.blocked(from) || !handshakes.tryAcquire(from)) {
        stats.rateLimited.increment();
        closeQuietly(socket);
        continue;
      }
      HostSession session = new HostSession(this, socket);
      Thread t = new Thread(session, name + "-session-" + ++n);
      t.setDaemon(true);
      sessions.put(session, t);
      t.start();
    }
  }

  private void receive() {
    WorkCompletion[] wcs = new WorkCompletion[32];
    for (int i = 0; i < wcs.length; i++) {
      wcs[i] = new WorkCompletion();
    }
    Duration wait = Duration.ofMillis(100);
    while (!closed) {
      int n;
      try {
        n = receiveQueue.await(wcs, wait);
      } catch (RuntimeException e) {
        if (!closed) {
          LOG.error("{}: receive queue failed", name, e);
        }
        return;
      }
      for (int i = 0; i < n; i++) {
        HostSession s = byQpn.get(wcs[i].qpNum());
        if (s != null) {
          s.onReceive(wcs[i]);
        }
      }
      if (n < wcs.length) {
        synchronized (drained) {
          drained.incrementAndGet();
          drained.notifyAll();
        }
      }
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // refused anyway
    }
  }

  // ---- for sessions

  HostOptions options() {
    return options;
  }

  MutualTls tls() {
    return tls;
  }

  GrantAuthority authority() {
    return authority;
  }

  AuditTrail audit() {
    return audit;
  }

  AuthFailureLimiter limiter() {
    return limiter;
  }

  SecureRandom random() {
    return random;
  }

  DeviceContext context() {
    return context;
  }

  CompletionQueue receiveQueue() {
    return receiveQueue;
  }

  int receiveDepth() {
    return receiveDepth;
  }

  ScheduledExecutorService timer() {
    return timer;
  }

  /** The session watchdog's thread: host-decided session ends run there, never on the timer. */
  ScheduledExecutorService watchdog() {
    return watchdog;
  }

  void handshakeDone(InetAddress from) {
    handshakes.release(from);
  }

  ResponderAddresses responderAddresses() {
    return responderAddresses;
  }

  boolean reserveSession(String tenant) {
    if (closed) {
      return false;
    }
    if (sessionCount.incrementAndGet() > options.maxSessions()) {
      sessionCount.decrementAndGet();
      return false;
    }
    AtomicInteger c = sessionsPerTenant.computeIfAbsent(tenant, k -> new AtomicInteger());
    if (c.incrementAndGet() > options.maxSessionsPerTenant()) {
      c.decrementAndGet();
      sessionCount.decrementAndGet();
      return false;
    }
    return true;
  }

  void releaseSession(String tenant) {
    sessionsPerTenant.get(tenant).decrementAndGet();
    sessionCount.decrementAndGet();
  }

  void sessionEnded(HostSession s) {
    sessions.remove(s);
  }

  TenantDomain domain(String tenant) {
    return domains.computeIfAbsent(
        tenant, t -> new TenantDomain(t, context.allocateProtectionDomain()));
  }

  HostedRegion hostedRegion(String tenant, String region) {
    return regions.get(tenant + "/" + region);
  }

  /**
   * Waits (bounded) until the receiver has emptied the receive queue twice since the call, so every
   * completion already queued when a session ends (records written just before a CLOSE that
   * overtook them on the control connection) is opened before the session detaches.
   */
  void drainReceives(Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    synchronized (drained) {
      long target = drained.get() + 2;
      while (drained.get() < target && !closed) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return;
        }
        try {
          drained.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  void attach(int qpn, HostSession s) {
    byQpn.put(qpn, s);
  }

  void detach(int qpn) {
    byQpn.remove(qpn);
  }

  void grantIssued(HostGrant g) {
    grants.put(g.id, g);
    stats.grantsIssued.increment();
  }

  void grantEnded(HostGrant g) {
    if (grants.remove(g.id) != null) {
      stats.revocations.increment();
    }
  }

  /** One protection domain per tenant. */
  static final class TenantDomain {
    final String tenant;
    final ProtectionDomain pd;

    TenantDomain(String tenant, ProtectionDomain pd) {
      this.tenant = tenant;
      this.pd = pd;
    }
  }

  static final class Stats {
    final LongAdder sessionsOpened = new LongAdder();
    final LongAdder authFailures = new LongAdder();
    final LongAdder rateLimited = new LongAdder();
    final LongAdder quotaRefusals = new LongAdder();
    final LongAdder grantsIssued = new LongAdder();
    final LongAdder denials = new LongAdder();
    final LongAdder revocations = new LongAdder();
    final LongAdder recordsOpened = new LongAdder();
    final LongAdder bytesOpened = new LongAdder();
    final LongAdder recordsRejected = new LongAdder();
    final LongAdder remoteAccessErrors = new LongAdder();
    final LongAdder protocolErrors = new LongAdder();
    final LongAdder staleNotifications = new LongAdder();
    final LongAdder sessionsTerminated = new LongAdder();
    final LongAdder handshakeDeadlines = new LongAdder();
    final LongAdder responderRefusals = new LongAdder();
  }
}
