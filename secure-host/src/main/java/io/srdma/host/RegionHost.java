package io.srdma.host;

import io.srdma.channel.ChannelException;
import io.srdma.channel.protocol.RevokeReason;
import io.srdma.channel.transport.EventLoop;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.Region;
import io.srdma.policy.ReloadResult;
import io.srdma.policy.Tenant;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.VerbsException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * <p>Threads, whatever the number of sessions: {@link HostOptions#controlThreads} event loops
 * ({@code srdma-host-<n>-control-<i>}: accept, TLS, control frames in and out), {@link
 * HostOptions#workerThreads} workers ({@code srdma-host-<n>-worker-<i>}: each session's control
 * frames in order, TLS certificate checks), {@link HostOptions#openerThreads} openers ({@code
 * srdma-host-<n>-opener-<i>}: each polls its own completion queue and opens and delivers the
 * records of the sessions assigned to it; see {@link RecordListener} for what that means for
 * listeners), one timer (REVOKE notices of expiries, key rotations, endings), one watchdog ({@link
 * SessionWatchdog}: trust, lifetime, deadlines, grant expiries; never writes to a peer), and up to
 * {@link HostOptions#connectThreads} connectors ({@code srdma-host-<n>-connect-<i>}, made on
 * demand, ended when idle: the queue pairs' connects to the responder a peer named, a wait the peer
 * controls, so never on the workers; {@link HostOptions#maxConnectsPerTenant} at a time per
 * tenant). All are named {@code srdma-host-*} and stopped by {@link #close}. Sessions get what they
 * need from the host in one {@link HostContext}.
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

  private final HostOptions options;
  private final HostContext ctx;
  private final HostCounters counters;
  private final GrantAuthority authority;
  private final AuditTrail audit;
  private final DeviceContext context;
  private final OpenerPool openers;
  private final HostTables tables;
  private final boolean scopedByRegion;
  private final ScheduledExecutorService timer;
  private final ScheduledExecutorService watchdog;
  private final SessionAcceptor acceptor;
  private final EventLoop[] loops;
  private final ExecutorService workers;
  private final QueuePairConnector connector;

  /** Every session from accept to its end (read by tests by this name). */
  private final Map<HostSession, HostSession> sessions;

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
    MutualTls tls = MutualTls.server(o.credential(), o.trust());
    this.counters = new HostCounters();
    this.authority = new GrantAuthority(o.policy());
    this.audit = o.audit();
    AuthFailureLimiter limiter =
        new AuthFailureLimiter(o.authFailuresPerMinute(), System::nanoTime);
    PendingHandshakes handshakes =
        new PendingHandshakes(o.maxPendingHandshakes(), o.maxPendingHandshakesPerAddress());
    this.context = RdmaProviders.firstDevice(o.provider()).open(o.device());
    ResponderAddresses responderAddresses =
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
    OpenerPool pool = null;
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
      int receiveDepth =
          Math.max(
              1,
              Math.min(
                  o.receiveDepth(), Math.min(attributes.maxQpWr(), cqCapacity / o.maxSessions())));
      if (receiveDepth < o.receiveDepth()) {
        // not silent: a client with more writes in flight than this waits for receives (RNR)
        LOG.warn(
            "{}: receiveDepth {} lowered to {} per session: {} sessions x {} receives must fit the"
                + " {} completions the device's queues hold ({}: at most {} per queue pair);"
                + " lower maxSessions to keep it",
            name,
            o.receiveDepth(),
            receiveDepth,
            o.maxSessions(),
            o.receiveDepth(),
            cqCapacity,
            context.device().name(),
            attributes.maxQpWr());
      }
      // least-loaded assignment keeps every opener at or below ceil(maxSessions / openers)
      int openerCount = Math.min(o.openerThreads(), o.maxSessions());
      long perOpener = ((long) o.maxSessions() + openerCount - 1) / openerCount;
      int cqSize = (int) Math.max(receiveDepth, Math.min(cqCapacity, receiveDepth * perOpener));
      pool =
          OpenerPool.create(
              name,
              context,
              openerCount,
              cqSize,
              o.maxRecordPayload(),
              o.openerCpus(),
              o.openerProgress());
      this.openers = pool;
      this.tables = new HostTables(context, o, counters);
      this.sessions = tables.sessions;
      ServerSocketChannel server = SessionAcceptor.listen(o.bind());
      timer = singleThread(name + "-timer");
      watchdog = singleThread(name + "-watchdog");
      workers = workerPool(name + "-worker-", o.workerThreads());
      connector =
          new QueuePairConnector(name + "-connect-", o.connectThreads(), o.maxConnectsPerTenant());
      loops = new EventLoop[o.controlThreads()];
      for (int i = 0; i < loops.length; i++) {
        loops[i] = new EventLoop(name + "-control-" + i);
      }
      this.ctx =
          new HostContext(
              name,
              o,
              tls,
              authority,
              audit,
              counters,
              limiter,
              handshakes,
              responderAddresses,
              new SecureRandom(),
              context,
              scopedByRegion,
              receiveDepth,
              tables,
              pool,
              timer,
              watchdog,
              workers,
              connector);
      acceptor = new SessionAcceptor(ctx, server, loops);
      LOG.info(
          "{}: {} opener thread(s), completion queues of {} entries, receive depth {}",
          name,
          openerCount,
          cqSize,
          receiveDepth);
      ok = true;
    } finally {
      if (!ok) {
        // children first, or closing the context fails and hides why the start failed
        if (pool != null) {
          pool.close();
        }
        context.close();
      }
    }
  }

  /** A fixed pool of named daemon threads whose queue holds at most one task per session. */
  private static ExecutorService workerPool(String prefix, int threads) {
    AtomicInteger n = new AtomicInteger();
    return Executors.newFixedThreadPool(
        threads,
        r -> {
          Thread t = new Thread(r, prefix + n.getAndIncrement());
          t.setDaemon(true);
          return t;
        });
  }

  /**
   * One named daemon thread for timed tasks. A cancelled task leaves the queue at once: grant
   * expiries and session deadlines are cancelled far more often than they run, and each would
   * otherwise hold its grant and session in memory until its time (a grant's TTL: hours).
   */
  private static ScheduledThreadPoolExecutor singleThread(String threadName) {
    ScheduledThreadPoolExecutor e =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
    e.setRemoveOnCancelPolicy(true);
    return e;
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
    try {
      host.openers.start();
    } catch (VerbsException e) {
      host.close();
      throw new ChannelException(
          ChannelException.Reason.INVALID_ARGUMENT,
          null,
          "openerCpus " + options.openerCpus() + ": " + e.getMessage(),
          e);
    }
    for (EventLoop loop : host.loops) {
      loop.start();
    }
    host.acceptor.start();
    long period = SessionWatchdog.PERIOD.toMillis();
    java.util.concurrent.ScheduledFuture<?> unused =
        host.watchdog.scheduleAtFixedRate(
            new SessionWatchdog(
                host.counters,
                options.trust(),
                options.maxSessionLifetime(),
                options.requestTimeout(),
                options.idleTimeout(),
                () -> host.sessions.keySet()),
            period,
            period,
            TimeUnit.MILLISECONDS);
    LOG.info("{} listening on {}", host.name, host.address());
    return host;
  }

  /** The control-plane address clients connect to. */
  public InetSocketAddress address() {
    return acceptor.address();
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
    Map<String, HostedRegion> regions = tables.regions;
    synchronized (regions) {
      if (regions.containsKey(key)) {
        throw HostOptions.invalid(key + " is registered already");
      }
      ByteBuffer memory = ByteBuffer.allocateDirect((int) size);
      MemoryRegion mr =
          tables
              .domain(tenant)
              .pd
              .registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
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
    return List.copyOf(tables.regions.values());
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
    for (HostGrant g : tables.grants.values()) {
      out.add(g.info());
    }
    return out;
  }

  /**
   * Revokes a grant now: its window is invalidated before this returns, so the holder's next access
   * fails with a remote access error; the holder is told. When it returns no record of the grant is
   * being delivered to the region's listener and none will be: a record the opener had already
   * taken (its bytes all landed before the invalidation) is waited for, at most {@code
   * requestTimeout} (logged if longer), unless this is called from that record's listener.
   * Thread-safe.
   *
   * @param actor who revokes (audited)
   * @return false when no such grant is live
   */
  public boolean revoke(long grantId, String actor) {
    HostGrant g = tables.grants.get(grantId);
    if (g == null || !g.session.grants.end(g, RevokeReason.REVOKED, actor, true, 0)) {
      return false;
    }
    awaitDelivered(g, System.nanoTime() + ctx.options().requestTimeout().toNanos());
    return true;
  }

  /**
   * After a host-side end: waits until no record of {@code g} is being delivered, or until {@code
   * deadline} (System.nanoTime()), then logs.
   */
  private void awaitDelivered(HostGrant g, long deadline) {
    Duration limit = ctx.options().requestTimeout();
    if (!g.session.slots.awaitDelivered(g, deadline - System.nanoTime())) {
      LOG.warn(
          "grant {} ended while the listener of {}/{} still ran one of its records, for longer"
              + " than requestTimeout ({}): not waiting further",
          Long.toUnsignedString(g.id, 16),
          g.session.tenant,
          g.region.name(),
          limit);
    }
  }

  /**
   * Replaces the policy atomically; live grants the new policy forbids are revoked (and their
   * holders told). Once the new policy is in force, what it forbids is revoked whatever happens to
   * the audit log: an audit line that cannot be written (the reload's, or a revocation's) fails the
   * call afterwards, never leaves a forbidden grant usable.
   *
   * @throws io.srdma.policy.PolicyException when the new policy is refused; the old one stays
   * @throws io.srdma.policy.AuditException when the audit log failed: the new policy is in force
   *     and every grant it forbids was revoked (their windows invalidated, holders told), but not
   *     every line of it could be audited
   */
  public ReloadResult reloadPolicy(Policy next, String actor) {
    ReloadResult r = authority.reload(next);
    RuntimeException auditFailure = null;
    try {
      audit.reloaded(r, actor);
    } catch (RuntimeException e) {
      auditFailure = e;
    }
    // every forbidden grant is invalidated before any holder is told: telling one that stopped
    // reading blocks until the watchdog closes it, and must not keep another's grant usable
    List<HostGrant> ended = new ArrayList<>();
    for (ReloadResult.ForbiddenGrant f : r.forbidden()) {
      HostGrant g;
      try {
        g = tables.grants.get(Long.parseLong(f.grant().id()));
      } catch (NumberFormatException e) {
        LOG.warn("forbidden grant with foreign id {}", f.grant().id());
        continue;
      }
      // not found: still being issued, and its issuer ends it (GrantAuthority.forbidden)
      if (g == null) {
        continue;
      }
      try {
        if (g.session.grants.end(g, RevokeReason.POLICY_CHANGED, actor, false, 0)) {
          ended.add(g);
        }
      } catch (RuntimeException e) {
        // the end invalidated the window before its audit line failed: the grant is dead
        if (g.session.slots.hasEnded(g)) {
          ended.add(g);
        }
        if (auditFailure == null) {
          auditFailure = e;
        } else {
          auditFailure.addSuppressed(e);
        }
      }
    }
    long deadline = System.nanoTime() + ctx.options().requestTimeout().toNanos();
    for (HostGrant g : ended) {
      awaitDelivered(g, deadline); // one bound for the whole reload
    }
    for (HostGrant g : ended) {
      g.session.grants.tellRevoked(g, RevokeReason.POLICY_CHANGED);
    }
    if (auditFailure != null) {
      throw auditFailure;
    }
    return r;
  }

  /** The policy in force. */
  public Policy policy() {
    return authority.policy();
  }

  /** Counters since start. */
  public HostStats stats() {
    return counters.snapshot(
        (int) sessions.keySet().stream().filter(HostSession::isEstablished).count(),
        tables.grants.size());
  }

  /** Stops accepting, ends every session (revoking its grants), frees the device. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    tables.close();
    openers.stop(); // sessions waiting in a drain stop waiting: no opener soon
    acceptor.close();
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
    connector.close(); // after the terminations: a session still connecting ends as shutting down
    // one deadline for all of them: 10 s, plus 10 ms a session for a host with many (each end
    // revokes grants and writes the audit log on a worker), at most 5 minutes
    int count = sessions.size();
    long budget =
        Math.min(
            TimeUnit.MINUTES.toNanos(5),
            TimeUnit.SECONDS.toNanos(10) + TimeUnit.MILLISECONDS.toNanos(10) * count);
    long deadline = System.nanoTime() + budget;
    int lingering = 0;
    for (HostSession s : sessions.keySet()) {
      if (!awaitEnd(s, deadline)) {
        lingering++;
      }
    }
    if (lingering > 0) {
      LOG.warn(
          "{}: {} of {} sessions did not end within {} s",
          name,
          lingering,
          count,
          TimeUnit.NANOSECONDS.toSeconds(budget));
    }
    // never shutdownNow: interrupting a worker in the middle of an audit write would close the
    // audit log's file channel (ClosedByInterruptException) and lose every later line
    workers.shutdown();
    try {
      if (!workers.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("{}: workers still busy 10 s after the sessions' end; not interrupted", name);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (EventLoop loop : loops) {
      loop.close();
    }
    timer.shutdownNow();
    openers.close();
    for (HostedRegion r : tables.regions.values()) {
      r.close();
    }
    tables.regions.clear();
    for (HostTables.TenantDomain d : tables.domains.values()) {
      d.pd.close();
    }
    tables.domains.clear();
    context.close();
    LOG.info("{} closed", name);
  }

  /** Waits for {@code s} to end until {@code deadlineNanos}; false when it did not. */
  private static boolean awaitEnd(HostSession s, long deadlineNanos) {
    try {
      return s.awaitEnd(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The watchdog's thread (tests queue work on it to hold a host-decided end back). */
  ScheduledExecutorService watchdog() {
    return watchdog;
  }

  /** Sessions assigned to each opener thread now (tests). */
  int[] openerLoads() {
    return openers.loads();
  }
}
