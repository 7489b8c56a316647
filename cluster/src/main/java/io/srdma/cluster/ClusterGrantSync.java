package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host's live grants as leased etcd keys ({@code PREFIX/grants/HOST/ID}), so the deployment's
 * live grants are one range read, and a grant is revoked from anywhere by deleting its key.
 *
 * <ul>
 *   <li>Host → etcd: every {@link #PERIOD} the host's live grants are compared with what was
 *       published; a new grant gets a lease whose TTL is its remaining life (rounded up) and its
 *       key under that lease; a grant that ended on the host has its key deleted and its lease
 *       revoked. Nothing on the grant path waits for etcd.
 *   <li>etcd → host: a DELETE of one of this host's grant keys revokes that grant on the host
 *       (actor {@code cluster}); for a grant already ended or expired this does nothing.
 *   <li>Another host's console asks (etcd RBAC lets it write only its own keys): a PUT of {@code
 *       PREFIX/requests/FROM/HOST/ID} for this host revokes that grant, if the request names a
 *       grant this host has with the same expiry and peer (grant ids restart with the host, a
 *       request outlives none of its grants); requests written while this host was cut off are read
 *       on recovery ({@link RevokeRequests}).
 *   <li>Cut off from etcd: nothing is published and the leases are not renewed (they need not be:
 *       each lasts until its grant's expiry), so the deployment's view of this host's grants ends
 *       with the grants' own expiry. On recovery, a key this host had published that is gone was
 *       deleted meanwhile: that grant is revoked.
 *   <li>A publication whose answer was lost (the connection failed after the write was sent) may or
 *       may not be in etcd: the next probe re-reads this host's keys; listed under the lease it was
 *       sent with, it was written; not listed, a console may have deleted it, and the grant is
 *       revoked (fail closed; {@link GrantLedger} holds these rules). A refusal from etcd (access,
 *       quota, size) wrote nothing: the grant is published again later.
 * </ul>
 *
 * State is confined to the node's apply thread, except {@link #resync()} (probe thread), which
 * reads etcd first and then hands its findings to the apply thread.
 */
final class ClusterGrantSync implements Follower {
  static final Duration PERIOD = Duration.ofMillis(200);
  static final String ACTOR = "cluster";

  private static final Logger LOG = LoggerFactory.getLogger(ClusterGrantSync.class);

  private final EtcdLink link;
  private final String host;
  private final HostGrants grants;
  private final ScheduledExecutorService apply;
  private final BooleanSupplier connected;
  private final Clock clock;
  private final KeyWriter writer;
  private final GrantLedger ledger = new GrantLedger(); // apply thread only
  private Watch.Watcher watcher; // guarded by this
  private Watch.Watcher requestWatcher; // guarded by this
  private volatile boolean broken = true;
  private volatile boolean closed;
  private final RevokeRequests requests;

  /** Writes one grant's key under a lease; answers the revision of the write. */
  @FunctionalInterface
  interface KeyWriter {
    CompletableFuture<Long> put(ByteSequence key, ByteSequence value, long lease);
  }

  ClusterGrantSync(
      EtcdLink link,
      String host,
      HostGrants grants,
      ScheduledExecutorService apply,
      BooleanSupplier connected,
      Clock clock) {
    this(
        link,
        host,
        grants,
        apply,
        connected,
        clock,
        (key, value, lease) ->
            link.client()
                .getKVClient()
                .put(key, value, PutOption.builder().withLeaseId(lease).build())
                .thenApply(put -> put.getHeader().getRevision()));
  }

  /** As above, writing keys with {@code writer} (tests lose its answers). */
  ClusterGrantSync(
      EtcdLink link,
      String host,
      HostGrants grants,
      ScheduledExecutorService apply,
      BooleanSupplier connected,
      Clock clock,
      KeyWriter writer) {
    this.writer = writer;
    this.requests = new RevokeRequests(link, host, grants, this::markBroken);
    this.link = link;
    this.host = host;
    this.grants = grants;
    this.apply = apply;
    this.connected = connected;
    this.clock = clock;
  }

  void start() {
    requests.start();
    apply.scheduleWithFixedDelay(
        this::reconcileQuietly,
        PERIOD.toMillis(),
        PERIOD.toMillis(),
        java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** Revoke requests dropped from a full queue since start (each read again at a resync). */
  long droppedRequests() {
    return requests.dropped();
  }

  /** Revoke requests skipped as too large since start. */
  long oversized() {
    return requests.oversized();
  }

  @Override
  public boolean broken() {
    return broken;
  }

  @Override
  public void markBroken() {
    broken = true;
  }

  @Override
  public void resync() {
    // cleared first: a markBroken() while this reads (a lost answer, a full request queue) stands,
    // and the next probe reads again; if this throws, the node marks it broken again
    broken = false;
    // the watches first, from etcd's current revision, then the reads: a watch from a read's
    // revision + 1 is cancelled when another host compacted the history past it meanwhile
    // (Watches); a deletion or request after the watches' start is watched, an earlier one read
    Watch.Watcher grantWatch =
        Watches.openNow(
            link,
            link.keys().grantsOf(host),
            WatchOption.builder().isPrefix(true).withNoPut(true),
            this::onNext,
            this::onError,
            "watching this host's grants");
    Watch.Watcher requestWatch;
    try {
      requestWatch = requests.watch(this::onError);
    } catch (RuntimeException e) {
      grantWatch.close();
      throw e;
    }
    synchronized (this) {
      closeWatches();
      watcher = grantWatch;
      requestWatcher = requestWatch;
      if (closed) {
        closeWatches();
        return;
      }
    }
    Map<Long, GrantLedger.Written> present = new HashMap<>();
    long grantsRevision =
        EtcdRange.scan(
                link,
                link.keys().grantsOf(host),
                true,
                0,
                "reading this host's grants",
                kv ->
                    present.put(
                        ClusterKeys.grantIdOf(kv.getKey()),
                        new GrantLedger.Written(kv.getLease(), kv.getModRevision())))
            .revision();
    execute(() -> revokeAll(ledger.read(present, grantsRevision)));
    requests.read();
  }

  private void revokeAll(List<GrantLedger.Revoke> revokes) {
    for (GrantLedger.Revoke r : revokes) {
      revoke(r);
    }
  }

  private void revoke(GrantLedger.Revoke r) {
    if (grants.revoke(r.grantId(), ACTOR)) {
      LOG.info("grant {} revoked: {}", r.grantId(), r.why());
    }
  }

  private void onNext(WatchResponse r) {
    for (WatchEvent e : r.getEvents()) {
      if (e.getEventType() == WatchEvent.EventType.DELETE) {
        long id = ClusterKeys.grantIdOf(e.getKeyValue().getKey());
        long revision = e.getKeyValue().getModRevision();
        if (id >= 0) {
          execute(() -> deleted(id, revision));
        }
      }
    }
  }

  private void deleted(long id, long revision) {
    if (!ledger.deleted(id, revision)) {
      LOG.debug("an earlier key of grant {} was deleted (revision {}): ignored", id, revision);
    } else if (grants.revoke(id, ACTOR)) {
      LOG.info("grant {} revoked from the cluster (its key was deleted)", id);
    }
  }

  private void onError(Throwable t) {
    if (!closed) {
      broken = true;
      LOG.warn(
          "watch of this host's grants or revoke requests failed ({}); it resumes when etcd"
              + " answers",
          t.toString());
    }
  }

  private void reconcileQuietly() {
    try {
      if (!closed && connected.getAsBoolean() && !broken) {
        reconcile();
      }
    } catch (RuntimeException e) {
      LOG.error("publishing this host's grants failed; trying again", e);
    }
  }

  private void reconcile() {
    Instant now = clock.instant();
    Set<Long> live = new HashSet<>();
    for (ClusterGrant g : grants.live()) {
      live.add(g.grantId());
      if (ledger.tracked(g.grantId())) {
        continue;
      }
      long ms = Duration.between(now, g.expiresAt()).toMillis();
      if (ms <= 0) {
        continue;
      }
      publish(g, Math.max(1, (ms + 999) / 1000));
    }
    for (Map.Entry<Long, Long> e : ledger.toWithdraw(live).entrySet()) {
      long id = e.getKey();
      // the lease's revocation deletes the key with it
      link.client()
          .getLeaseClient()
          .revoke(e.getValue())
          .whenComplete(
              (r, x) ->
                  execute(
                      () -> {
                        if (x == null || EtcdLink.notFound(x)) {
                          ledger.withdrawn(id);
                        } else {
                          LOG.debug("revoking the lease of ended grant {}: {}", id, x.toString());
                          ledger.withdrawFailed(id);
                        }
                      }));
    }
  }

  private void publish(ClusterGrant g, long ttlSeconds) {
    long id = g.grantId();
    ledger.writing(id);
    link.client()
        .getLeaseClient()
        .grant(ttlSeconds)
        .whenComplete(
            (lease, x) -> {
              if (x != null) {
                // no lease, so no write was sent
                execute(() -> refused(id, x));
                return;
              }
              long leaseId = lease.getID();
              CompletableFuture<Long> put;
              try {
                put =
                    writer.put(link.keys().grant(host, id), ByteSequence.from(g.toJson()), leaseId);
              } catch (RuntimeException e) {
                put = CompletableFuture.failedFuture(e);
              }
              put.whenComplete((revision, y) -> execute(() -> answered(id, leaseId, revision, y)));
            });
  }

  private void answered(long id, long lease, Long revision, Throwable x) {
    if (x == null) {
      GrantLedger.Revoke r = ledger.written(id, lease, revision);
      if (r != null) {
        revoke(r);
      }
    } else if (EtcdLink.refusal(x)) {
      refused(id, x);
      link.client().getLeaseClient().revoke(lease); // nothing is under it; best effort
    } else {
      ledger.lost(id, lease);
      markBroken(); // the next probe re-reads this host's keys, which settles it
      LOG.info(
          "publishing grant {}: etcd's answer was lost ({}); the next read of this host's keys"
              + " tells whether it was written",
          id,
          x.toString());
    }
  }

  private void refused(long id, Throwable x) {
    ledger.refused(id);
    LOG.debug("publishing grant {} failed: {}", id, x.toString());
  }

  private void execute(Runnable r) {
    try {
      apply.execute(r);
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  /**
   * The host is stopping (it revokes all its grants next): revokes every published lease, which
   * deletes the grants' keys, waiting at most {@code limit}. Runs on the apply thread. A host that
   * crashes instead leaves its grants listed until their expiry.
   */
  void withdrawAll(Duration limit) {
    java.util.concurrent.Future<java.util.concurrent.CompletableFuture<Void>> all =
        apply.submit(
            () -> {
              List<java.util.concurrent.CompletableFuture<?>> revokes = new java.util.ArrayList<>();
              for (Long lease : ledger.withdrawAll()) {
                revokes.add(
                    link.client()
                        .getLeaseClient()
                        .revoke(lease)
                        .exceptionally(
                            x -> {
                              if (EtcdLink.notFound(x)) {
                                return null; // expired, or a lost write's lease never used
                              }
                              throw new java.util.concurrent.CompletionException(x);
                            }));
              }
              return java.util.concurrent.CompletableFuture.allOf(
                  revokes.toArray(new java.util.concurrent.CompletableFuture<?>[0]));
            });
    try {
      all.get(limit.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
          .get(limit.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException
        | java.util.concurrent.TimeoutException
        | RejectedExecutionException e) {
      LOG.info(
          "this host's grants could not all be withdrawn from etcd ({}); they leave it at their"
              + " expiry",
          e.toString());
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      closeWatches();
    }
    requests.close();
  }

  /**
   * Stops both watches until the next {@link #resync()} (tests: a watch that died with its
   * connection, so that only the re-read of this host's keys can find what was deleted meanwhile).
   */
  synchronized void closeWatches() {
    if (watcher != null) {
      watcher.close();
      watcher = null;
    }
    if (requestWatcher != null) {
      requestWatcher.close();
      requestWatcher = null;
    }
  }
}
