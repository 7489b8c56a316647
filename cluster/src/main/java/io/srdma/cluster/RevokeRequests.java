package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Revoke requests addressed to this host by other hosts' consoles ({@code
 * PREFIX/requests/FROM/HOST/ID}; etcd RBAC lets a host write only under its own {@code FROM}):
 * watched from each resync on, and read at it once the watch is created. A request revokes the
 * grant it names if this host has a live grant with that id, expiry and peer (grant ids restart
 * with the host, so a request outlives none of its grants); a malformed request is logged and
 * ignored, one too large is skipped and counted.
 *
 * <p>Requests are matched on this class's own thread ({@value #THREAD_NAME}), in batches of up to
 * {@value #BATCH} against one reading of the host's live grants, never on the node's apply thread:
 * another host writes requests addressed to this one at will (under its own {@code FROM}), and a
 * flood of them, each matching nothing, must not delay the CRL or the policy the apply thread
 * applies (nor grow its queue). Requests wait in a queue of {@value #PENDING}; one that finds it
 * full is dropped and counted, and {@code overflow} runs (the grant sync marks itself broken, so
 * the next probe reads every request again: nothing is lost, the keys stay in etcd until their
 * grant's expiry). Malformed requests are counted, the first few logged.
 *
 * <p>Thread-safe: {@link #read()} runs on the probe thread, the watch's callbacks on jetcd's.
 */
final class RevokeRequests {
  /**
   * The largest revoke request acted on: a request is a grant's JSON (~300 bytes; host, tenant,
   * peer and region names included), so 16 KiB is ample margin; a larger value is skipped.
   */
  static final int MAX_REQUEST_BYTES = 16 * 1024;

  /** Revoke requests addressed to this host read at once at resync. */
  static final int REQUESTS_IN_FLIGHT = 64;

  /** Requests waiting to be matched; a request that finds the queue full is dropped. */
  static final int PENDING = 4096;

  /** Requests matched against one reading of the live grants. */
  static final int BATCH = 1024;

  /** The longest the probe thread's read waits for room in the queue, in all. */
  static final Duration QUEUE_WAIT = Duration.ofSeconds(1);

  /** Malformed requests logged one line each; the rest only counted. */
  static final int LOGGED = 8;

  static final String THREAD_NAME = "srdma-cluster-requests";

  private static final Logger LOG = LoggerFactory.getLogger(RevokeRequests.class);

  private record Request(ClusterGrant asked, String from) {}

  private final EtcdLink link;
  private final String host;
  private final HostGrants grants;
  private final Runnable overflow;
  private final AtomicLong oversized = new AtomicLong();
  private final AtomicLong malformed = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final BlockingQueue<Request> pending = new ArrayBlockingQueue<>(PENDING);
  private final Thread worker;
  private volatile boolean closed;

  /**
   * @param overflow run (on the thread that found the queue full) when a request was dropped
   */
  RevokeRequests(EtcdLink link, String host, HostGrants grants, Runnable overflow) {
    this.link = link;
    this.host = host;
    this.grants = grants;
    this.overflow = overflow;
    this.worker = new Thread(this::work, THREAD_NAME);
    worker.setDaemon(true);
  }

  void start() {
    worker.start();
  }

  /** Stops the matching thread (waits at most 5 s); requests still queued are dropped. */
  void close() {
    closed = true;
    worker.interrupt();
    if (worker.isAlive() && Thread.currentThread() != worker) {
      try {
        worker.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Requests dropped because the queue was full, since start. */
  long dropped() {
    return dropped.get();
  }

  /** Malformed requests ignored since start. */
  long malformed() {
    return malformed.get();
  }

  /** Requests skipped as too large since start. */
  long oversized() {
    return oversized.get();
  }

  /**
   * Watches the requests written from now on (etcd's current revision; returns once etcd created
   * the watch): open it before {@link #read()}, so that a request is either read or watched.
   *
   * @param onError told when the watch fails
   * @throws ClusterException {@code UNAVAILABLE} if etcd did not create it in time
   */
  Watch.Watcher watch(Consumer<Throwable> onError) {
    return Watches.openNow(
        link,
        link.keys().requests(),
        WatchOption.builder().isPrefix(true).withNoDelete(true),
        this::onPut,
        onError,
        "watching revoke requests");
  }

  /**
   * Reads the revoke requests addressed to this host and acts on each (after {@link #watch}
   * started); returns the revision the read began at. The keys name their target ({@code
   * requests/FROM/HOST/ID}) but not as a prefix, so the whole prefix is read keys only (paged) and
   * only this host's requests are read with their values, one key per request: what another host
   * writes under its own {@code requests/FROM/} costs this host its keys' bytes, never its values'.
   * Only requests whose key names one of this host's live grants are read (the live grants are
   * taken after the keys: a grant issued before a request was written is among them), so how many
   * values are read is bounded by this host's grants, not by what another host wrote.
   */
  long read() {
    long waitUntil = System.nanoTime() + QUEUE_WAIT.toNanos();
    List<ByteSequence> mine = new ArrayList<>();
    EtcdRange.Result keys =
        EtcdRange.scan(
            link,
            link.keys().requests(),
            true,
            0,
            "reading revoke requests",
            kv -> {
              if (host.equals(link.keys().requestTarget(kv.getKey()))) {
                mine.add(kv.getKey());
              }
            });
    long revision = keys.revision();
    long skipped = keys.skipped();
    Set<Long> live = new HashSet<>();
    for (ClusterGrant g : grants.live()) {
      live.add(g.grantId());
    }
    mine.removeIf(k -> !live.contains(ClusterKeys.grantIdOf(k)));
    // each value as it is now, not at the keys' revision (which another host may have compacted
    // away): a request deleted since has lapsed, one written since the watch delivers too
    for (int i = 0; i < mine.size(); i += REQUESTS_IN_FLIGHT) {
      List<ByteSequence> batch = mine.subList(i, Math.min(mine.size(), i + REQUESTS_IN_FLIGHT));
      List<CompletableFuture<GetResponse>> reads = new ArrayList<>();
      for (ByteSequence key : batch) {
        reads.add(link.client().getKVClient().get(key));
      }
      for (int j = 0; j < batch.size(); j++) {
        GetResponse r;
        try {
          r = link.await(reads.get(j), "reading a revoke request");
        } catch (ClusterException e) {
          if (!EtcdRange.tooLarge(e)) {
            throw e;
          }
          skipped++;
          LOG.warn(
              "revoke request {} skipped: too large to read ({})",
              EtcdRange.escape(batch.get(j)),
              e.getMessage());
          continue;
        }
        for (KeyValue kv : r.getKvs()) {
          if (!onRequest(kv, waitUntil)) {
            skipped++;
          }
        }
      }
    }
    oversized.addAndGet(skipped);
    return revision;
  }

  private void onPut(WatchResponse r) {
    for (WatchEvent e : r.getEvents()) {
      if (e.getEventType() == WatchEvent.EventType.PUT && !onRequest(e.getKeyValue(), 0)) {
        oversized.incrementAndGet();
      }
    }
  }

  /**
   * Queues a revoke request if it is addressed to this host; false if it was too large.
   *
   * @param waitUntil until when ({@link System#nanoTime()}) the caller may wait for room in the
   *     queue, 0 for not at all: the probe thread's read may wait (at most {@link #QUEUE_WAIT} in
   *     all), a watch callback (jetcd's thread, shared with the CRL's and the policy's watches) may
   *     not
   */
  private boolean onRequest(KeyValue kv, long waitUntil) {
    if (!host.equals(link.keys().requestTarget(kv.getKey()))) {
      return true;
    }
    String from = link.keys().requestSource(kv.getKey());
    if (kv.getValue().size() > MAX_REQUEST_BYTES) {
      LOG.warn(
          "revoke request {} skipped: its value is {} bytes, over the {} a console writes",
          EtcdRange.escape(kv.getKey()),
          kv.getValue().size(),
          MAX_REQUEST_BYTES);
      return false;
    }
    ClusterGrant asked;
    try {
      asked = ClusterGrant.parse(kv.getValue().getBytes());
    } catch (ClusterException e) {
      long n = malformed.incrementAndGet();
      if (n <= LOGGED) {
        LOG.warn(
            "a malformed revoke request from {} ignored: {}{}",
            from,
            e.getMessage(),
            n == LOGGED ? "; further malformed requests are counted, not logged" : "");
      }
      return true;
    }
    if (!queue(new Request(asked, from), waitUntil)) {
      if (dropped.incrementAndGet() == 1 || Long.bitCount(dropped.get()) == 1) {
        LOG.warn(
            "revoke requests arrive faster than they are matched ({} dropped so far); all are"
                + " read again at the next probe",
            dropped.get());
      }
      overflow.run();
    }
    return true;
  }

  private boolean queue(Request r, long waitUntil) {
    long wait = waitUntil == 0 ? 0 : waitUntil - System.nanoTime();
    if (wait <= 0) {
      return pending.offer(r);
    }
    try {
      return pending.offer(r, wait, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void work() {
    List<Request> batch = new ArrayList<>(BATCH);
    Map<Long, ClusterGrant> live = new HashMap<>();
    while (!closed) {
      try {
        batch.add(pending.take());
      } catch (InterruptedException e) {
        return; // closing
      }
      pending.drainTo(batch, BATCH - 1);
      try {
        live.clear();
        for (ClusterGrant g : grants.live()) {
          live.put(g.grantId(), g);
        }
        for (Request r : batch) {
          ClusterGrant g = live.get(r.asked().grantId());
          if (g != null
              && g.expiresAt().equals(r.asked().expiresAt())
              && g.peer().equals(r.asked().peer())
              && grants.revoke(g.grantId(), ClusterGrantSync.ACTOR)) {
            live.remove(g.grantId());
            LOG.info("grant {} revoked at the request of {}'s console", g.grantId(), r.from());
          }
        }
      } catch (RuntimeException e) {
        LOG.error("matching revoke requests failed; {} dropped", batch.size(), e);
        overflow.run(); // read them all again at the next probe
      }
      batch.clear();
    }
  }
}
