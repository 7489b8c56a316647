package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.srdma.keys.RevocationList;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyWatcher;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One host's membership in a clustered deployment: follows the deployment's policy and revocation
 * list in etcd and applies them through the host's own paths (the policy reload listener, the
 * revocation list the handshake and the session watchdog check), publishes the policy hash it runs,
 * and watches its link to etcd.
 *
 * <p><b>Degraded mode.</b> A probe reads from etcd every {@link #PROBE_PERIOD}; when it fails the
 * node is {@link State#DEGRADED}: the host keeps serving with the last policy and revocation list
 * it applied (nothing is loosened while etcd is away), and {@link #state()} says so for the console
 * and /metrics. When etcd answers again, every follower reads its key afresh, so a policy pushed or
 * a peer revoked meanwhile is applied on recovery, and the host republishes its policy hash. Each
 * follower resyncs on its own: one that fails (retried at every probe) keeps the node degraded with
 * its reason but stops neither the others nor the grant publishing, audit anchoring and session
 * count, which run whenever etcd answers.
 *
 * <p><b>Watch liveness.</b> At every probe that etcd answers, the watches are checked ({@link
 * WatchLiveness}): each is asked for progress every {@link ClusterConfig#watchCheckPeriod()}, and
 * one that does not answer, or answers from behind the revision the probe read, within the request
 * timeout is lost: its follower watches again and re-reads, and the node is DEGRADED until the new
 * watch answered.
 *
 * <p>Threads: one daemon probe thread ({@value #THREAD_NAME}) plus jetcd's own; {@link #close()}
 * stops all of them (bounded).
 */
public final class ClusterNode implements AutoCloseable {
  /** The probe thread's name. */
  public static final String THREAD_NAME = "srdma-cluster-probe";

  /** The thread that applies what the watches deliver. */
  public static final String APPLY_THREAD_NAME = "srdma-cluster-apply";

  /** How often the link to etcd is probed. */
  public static final Duration PROBE_PERIOD = Duration.ofMillis(250);

  /**
   * Consecutive failed probes before the node calls itself degraded: one request stuck on a member
   * that just died is not an outage (the next goes to a live member).
   */
  static final int FAILURES_TO_DEGRADE = 2;

  private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);

  /** How often the audit head is anchored (when it moved). */
  public static final Duration ANCHOR_PERIOD = Duration.ofSeconds(1);

  /** The link to etcd as the host sees it. */
  public enum State {
    /** etcd answers; pushed policies and revocations are followed. */
    CONNECTED,
    /**
     * etcd does not answer, or something followed could not be read ({@link Status#lastError()}
     * says what); the host serves with the last state it applied, and whatever still works (the
     * other followers, publishing grants, anchoring the audit head) goes on.
     */
    DEGRADED
  }

  /**
   * A snapshot for the console and /metrics.
   *
   * @param state connected or degraded
   * @param since when the state began
   * @param lastError why the last probe failed, or null
   * @param degradedEpisodes how often the node went degraded since start
   * @param policy what the host reports about its policy
   * @param crlNumber the number of the revocation list in force, or null
   */
  public record Status(
      State state,
      Instant since,
      String lastError,
      long degradedEpisodes,
      HostPolicyState policy,
      BigInteger crlNumber) {}

  private final EtcdLink link;
  private final String host;
  private final ClusterPolicyWatcher policy;
  private final RevocationList revocations;
  private final List<Follower> followers = new ArrayList<>();
  private final ScheduledExecutorService probe;
  private final ScheduledExecutorService applier;
  private final ClusterGrantSync grantSync;
  private final AuditAnchorGuard anchor;
  private final java.util.function.IntSupplier sessions;
  private volatile int publishedSessions = -1;
  private long anchoredAtNanos;
  private final Clock clock;
  private final AtomicLong degradedEpisodes = new AtomicLong();
  private volatile State state = State.DEGRADED;
  private volatile Instant since;
  private volatile String lastError = "not yet connected";
  private volatile boolean reachable; // the last probe was answered
  private volatile boolean closed;
  private int failures; // consecutive failed probes; probe thread only

  private ClusterNode(Options o, EtcdLink link) {
    this.link = link;
    this.host = o.host;
    this.clock = o.clock;
    this.since = clock.instant();
    this.revocations = o.revocations;
    this.anchor =
        o.auditHead == null
            ? null
            : new AuditAnchorGuard(link, host, o.auditHead, o.auditChain, o.anchorListener, clock);
    this.sessions = o.sessions;
    this.probe = daemon(THREAD_NAME);
    this.applier = daemon(APPLY_THREAD_NAME);
    if (o.authority != null) {
      policy =
          new ClusterPolicyWatcher(
              link,
              host,
              o.authority,
              o.policyListener,
              o.loader,
              o.appliedText,
              clock,
              o.policyCa,
              o.policySerials);
      followers.add(policy.follower(applier));
    } else {
      policy = null;
    }
    if (o.revocations != null) {
      followers.add(
          new ClusterRevocationWatcher(link, o.revocations, o.crlFile, o.revocationApplied)
              .follower(applier));
    }
    if (o.grants != null) {
      ClusterGrantSync sync =
          new ClusterGrantSync(link, host, o.grants, applier, () -> reachable, clock);
      followers.add(sync);
      grantSync = sync;
    } else {
      grantSync = null;
    }
  }

  /**
   * Joins the deployment: opens the link, reads and applies what etcd holds if it answers now (else
   * starts degraded, serving with the local state), and starts following.
   *
   * @param o what to follow and where to apply it
   * @return the running node; close it to leave
   * @throws ClusterException {@code BAD_CONFIG} if the TLS material cannot be read
   */
  public static ClusterNode start(Options o) {
    Objects.requireNonNull(o.config, "config");
    Objects.requireNonNull(o.host, "host");
    if (o.authority != null) {
      Objects.requireNonNull(o.policyListener, "policyListener");
    }
    EtcdLink link = EtcdLink.open(o.config, o.watches);
    ClusterNode n = new ClusterNode(o, link);
    n.tick();
    if (n.grantSync != null) {
      n.grantSync.start();
    }
    n.probe.scheduleWithFixedDelay(
        n::tick, PROBE_PERIOD.toMillis(), PROBE_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    return n;
  }

  /** The host's name in the deployment. */
  public String host() {
    return host;
  }

  /** Connected or degraded. */
  public State state() {
    return state;
  }

  /**
   * How many pushed policies this node refused (unsigned, badly signed, rolled back); 0 if none.
   */
  public long policyRefusals() {
    return policy == null ? 0 : policy.refusals();
  }

  /** Pushed policies this node refused since start, by reason (every reason, 0 if none). */
  public java.util.Map<PolicyRefusal.Reason, Long> policyRefusalsByReason() {
    if (policy == null) {
      java.util.Map<PolicyRefusal.Reason, Long> none =
          new java.util.EnumMap<>(PolicyRefusal.Reason.class);
      for (PolicyRefusal.Reason r : PolicyRefusal.Reason.values()) {
        none.put(r, 0L);
      }
      return none;
    }
    return policy.refusalsByReason();
  }

  /** The last pushed policy this node refused, or null. */
  public PolicyRefusal lastPolicyRefusal() {
    return policy == null ? null : policy.lastRefusal();
  }

  /** A snapshot for the console and /metrics. */
  public Status status() {
    return new Status(
        state,
        since,
        state == State.DEGRADED ? lastError : null,
        degradedEpisodes.get(),
        policy == null ? null : policy.state(),
        revocations == null ? null : revocations.number());
  }

  /**
   * Revoke requests addressed to this host that were skipped as too large to be one (each logged
   * once per read); 0 if none.
   */
  public long skippedRevokeRequests() {
    return grantSync == null ? 0 : grantSync.oversized();
  }

  /**
   * Watches found open but silent since start (a progress request unanswered, or answered from
   * behind what the host read, within the request timeout): each was watched again and re-read.
   */
  public long silentWatches() {
    return link.liveness().silent();
  }

  /** The link (for range reads by the console). */
  public EtcdLink link() {
    return link;
  }

  private void tick() {
    if (closed) {
      return;
    }
    long revision;
    try {
      revision =
          link.await(
                  link.client()
                      .getKVClient()
                      .get(
                          ByteSequence.from(
                              link.keys().prefix() + "/probe", StandardCharsets.UTF_8)),
                  "probe")
              .getHeader()
              .getRevision();
    } catch (ClusterException e) {
      if (closed) {
        return; // close interrupted this probe
      }
      lastError = e.getMessage();
      reachable = false;
      // a watch stream may be stuck on the connection that failed this probe: re-read and
      // re-watch everything at the next probe that succeeds
      for (Follower f : followers) {
        f.markBroken();
      }
      if (++failures >= FAILURES_TO_DEGRADE && state == State.CONNECTED) {
        state = State.DEGRADED;
        since = clock.instant();
        degradedEpisodes.incrementAndGet();
        LOG.warn(
            "etcd unreachable ({}); serving with the last policy and revocation list applied",
            e.getMessage());
      }
      return;
    } catch (RuntimeException e) {
      LOG.error("cluster probe failed", e);
      return;
    }
    failures = 0;
    boolean back = !reachable; // first answer since start or since an outage
    reachable = true;
    // each follower on its own: one that cannot resync (say a read etcd refuses) leaves the node
    // DEGRADED with its reason, but the others still follow and the host still publishes its
    // grants, audit head and session count
    List<String> errors = new ArrayList<>();
    String anchorHeld = anchor == null ? null : anchor.held();
    if (anchorHeld != null) {
      errors.add(anchorHeld);
    }
    for (Follower f : followers) {
      if (!back && !f.broken()) {
        continue;
      }
      try {
        f.resync();
      } catch (ClusterException e) {
        f.markBroken();
        errors.add(e.getMessage());
      } catch (RuntimeException e) {
        f.markBroken();
        LOG.error("cluster resync failed", e);
        errors.add(e.toString());
      }
    }
    for (Follower f : followers) {
      String u = f.unapplied(); // read, not in force (a local file unwritable…): retried
      if (u != null) {
        errors.add(u);
      }
    }
    // after the resyncs, which replaced every watch of a follower that was broken: a watch found
    // silent here is watched again and re-read at the next probe, and keeps the node DEGRADED until
    // its new watch answered
    link.liveness().check(System.nanoTime(), revision);
    String unproven = link.liveness().unproven();
    if (unproven != null) {
      errors.add(unproven);
    }
    if (!errors.isEmpty()) {
      String why = "etcd answers but not all is followed: " + String.join("; ", errors);
      if (state == State.CONNECTED) {
        state = State.DEGRADED;
        since = clock.instant();
        degradedEpisodes.incrementAndGet();
      }
      if (!why.equals(lastError)) {
        LOG.warn("{}; retrying at each probe", why);
      }
      lastError = why;
    } else if (state == State.DEGRADED) {
      state = State.CONNECTED;
      since = clock.instant();
      lastError = null;
      LOG.info("etcd reachable: following the deployment's policy and revocations");
      if (policy != null) {
        policy.republish(false);
      }
    }
    if (policy != null) {
      policy.publishRefusals();
    }
    anchorAuditHead();
    publishSessions();
  }

  private void publishSessions() {
    if (sessions == null) {
      return;
    }
    int n;
    try {
      n = sessions.getAsInt();
    } catch (RuntimeException e) {
      LOG.warn("session count unavailable: {}", e.toString());
      return;
    }
    if (n == publishedSessions) {
      return;
    }
    link.client()
        .getKVClient()
        .put(
            link.keys().hostSessions(host),
            ByteSequence.from(Integer.toString(n), StandardCharsets.UTF_8))
        .whenComplete(
            (r, e) -> {
              if (e != null) {
                publishedSessions = -1; // try again at the next probe
              }
            });
    publishedSessions = n;
  }

  private void anchorAuditHead() {
    if (anchor == null || System.nanoTime() - anchoredAtNanos < ANCHOR_PERIOD.toNanos()) {
      return;
    }
    anchoredAtNanos = System.nanoTime();
    anchor.round();
  }

  /**
   * Leaves the deployment: stops following (bounded), withdraws the host's published grants from
   * etcd if it is connected (the host revokes them all as it stops; a host that crashes leaves them
   * listed until their expiry), and closes the link. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    // read before stopping the probe: the interrupt can fail a probe in flight, which is no news
    // about etcd
    boolean answering = reachable;
    probe.shutdownNow();
    try {
      if (!probe.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("cluster probe did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (grantSync != null && answering) {
      grantSync.withdrawAll(link.config().requestTimeout());
    }
    for (Follower f : followers) {
      f.close();
    }
    applier.shutdownNow();
    try {
      if (!applier.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("cluster apply thread did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    link.close();
  }

  private static ScheduledExecutorService daemon(String name) {
    return Executors.newSingleThreadScheduledExecutor(
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        });
  }

  /** What a node follows and where it applies it. */
  public static final class Options {
    private ClusterConfig config;
    private String host;
    private GrantAuthority authority;
    private PolicyWatcher.Listener policyListener;
    private java.security.cert.X509Certificate policyCa;
    private io.srdma.keys.HighWaterMark policySerials;
    private PolicyLoader loader = new PolicyLoader();
    private Consumer<String> appliedText;
    private RevocationList revocations;
    private Path crlFile;
    private BiConsumer<BigInteger, Integer> revocationApplied;
    private HostGrants grants;
    private java.util.function.Supplier<AuditAnchor.Head> auditHead;
    private AuditAnchor.Chain auditChain;
    private AuditAnchor.Listener anchorListener;
    private java.util.function.IntSupplier sessions;
    private Clock clock = Clock.systemUTC();
    private java.util.function.UnaryOperator<io.etcd.jetcd.Watch> watches =
        java.util.function.UnaryOperator.identity();

    /** Tests: the node's watches go through {@code w} applied to jetcd's watch client. */
    Options watches(java.util.function.UnaryOperator<io.etcd.jetcd.Watch> w) {
      watches = Objects.requireNonNull(w, "watches");
      return this;
    }

    /** The cluster section. */
    public Options config(ClusterConfig c) {
      config = c;
      return this;
    }

    /** The host's name in the deployment. */
    public Options host(String h) {
      host = h;
      return this;
    }

    /**
     * Follow the pushed policy: install each into {@code authority} and tell {@code listener}, as a
     * {@link PolicyWatcher} does for a file. Only a policy the deployment CA {@code ca} signed for
     * this deployment, with a serial not below the highest applied, is installed ({@link
     * SignedPolicy}, {@link #policySerials}); anything else is refused and reported to {@code
     * listener} as rejected (at most once a minute).
     */
    public Options policy(
        GrantAuthority authority,
        PolicyWatcher.Listener listener,
        java.security.cert.X509Certificate ca) {
      this.authority = authority;
      this.policyListener = listener;
      this.policyCa = Objects.requireNonNull(ca, "the deployment CA certificate");
      return this;
    }

    /**
     * Keep the highest policy serial applied (and its text's hash) in {@code serials}, so that it
     * survives restarts: a signed policy below it, or equal with another text, is refused at the
     * next start too (null, the default: memory only). {@code srdma serve} keeps it in {@code
     * srdma-policy-serial} beside its audit log.
     */
    public Options policySerials(io.srdma.keys.HighWaterMark serials) {
      this.policySerials = serials;
      return this;
    }

    /** The loader pushed texts are validated with (its size limit applies). */
    public Options loader(PolicyLoader l) {
      loader = Objects.requireNonNull(l);
      return this;
    }

    /** Told the text of each policy put in force (the console shows it). */
    public Options appliedText(Consumer<String> c) {
      appliedText = c;
      return this;
    }

    /**
     * Follow the deployment's revocation list into {@code list} (the one the host's trust checks),
     * writing each newer one over {@code crlFile} (null: memory only).
     */
    public Options revocations(RevocationList list, Path crlFile) {
      this.revocations = list;
      this.crlFile = crlFile;
      return this;
    }

    /** Told (CRL number, revoked count) after each newer list is in force. */
    public Options revocationApplied(BiConsumer<BigInteger, Integer> c) {
      revocationApplied = c;
      return this;
    }

    /**
     * Publish the host's live grants as leased keys, and revoke one when its key is deleted ({@link
     * GrantDirectory#revoke}).
     */
    public Options grants(HostGrants g) {
      grants = g;
      return this;
    }

    /**
     * Anchor the host's audit chain head in etcd: read (it must be cheap and consistent) every
     * {@link #ANCHOR_PERIOD} while etcd answers (degraded or not) and published when it moved.
     * Before the first anchor (and whenever the anchor changed under the node), the anchor already
     * in etcd must be in {@code chain} ({@link AuditAnchor#chainOf}); if it is not, it is kept,
     * nothing is anchored and the node reports {@link State#DEGRADED} until an operator drops it
     * ({@link AuditAnchor#reset}). Each anchor is a compare-and-swap on the key's revision.
     */
    public Options auditHead(
        java.util.function.Supplier<AuditAnchor.Head> head, AuditAnchor.Chain chain) {
      auditHead = Objects.requireNonNull(head, "head");
      auditChain = Objects.requireNonNull(chain, "chain");
      return this;
    }

    /** Told of a kept anchor and of an operator's reset, to audit them (null: logged only). */
    public Options anchorListener(AuditAnchor.Listener l) {
      anchorListener = l;
      return this;
    }

    /**
     * Publish the host's live session count (for the fleet view), read at every probe while etcd
     * answers and written when it changed.
     */
    public Options sessions(java.util.function.IntSupplier count) {
      sessions = count;
      return this;
    }

    /** The clock of published times (tests). */
    public Options clock(Clock c) {
      clock = Objects.requireNonNull(c);
      return this;
    }
  }
}
