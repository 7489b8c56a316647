package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Revoke requests addressed to this host by other hosts' consoles ({@code
 * PREFIX/requests/FROM/HOST/ID}; etcd RBAC lets a host write only under its own {@code FROM}): read
 * at each resync, watched after. A request revokes the grant it names if this host has a live grant
 * with that id, expiry and peer (grant ids restart with the host, so a request outlives none of its
 * grants); a malformed request is logged and ignored, one too large is skipped and counted.
 *
 * <p>Thread-safe: {@link #read()} runs on the probe thread, the watch's callbacks on jetcd's; each
 * revocation is handed to the apply thread through {@code apply}.
 */
final class RevokeRequests {
  /**
   * The largest revoke request acted on: a request is a grant's JSON (~300 bytes; host, tenant,
   * peer and region names included), so 16 KiB is ample margin; a larger value is skipped.
   */
  static final int MAX_REQUEST_BYTES = 16 * 1024;

  /** Revoke requests addressed to this host read at once at resync. */
  static final int REQUESTS_IN_FLIGHT = 64;

  private static final Logger LOG = LoggerFactory.getLogger(RevokeRequests.class);

  private final EtcdLink link;
  private final String host;
  private final HostGrants grants;
  private final Consumer<Runnable> apply;
  private final AtomicLong oversized = new AtomicLong();

  RevokeRequests(EtcdLink link, String host, HostGrants grants, Consumer<Runnable> apply) {
    this.link = link;
    this.host = host;
    this.grants = grants;
    this.apply = apply;
  }

  /** Requests skipped as too large since start. */
  long oversized() {
    return oversized.get();
  }

  /**
   * Watches the requests written after {@code revision} (the one {@link #read()} returned).
   *
   * @param onError told when the watch fails
   */
  Watch.Watcher watch(long revision, Consumer<Throwable> onError) {
    return link.client()
        .getWatchClient()
        .watch(
            link.keys().requests(),
            WatchOption.builder()
                .isPrefix(true)
                .withNoDelete(true)
                .withRevision(revision + 1)
                .build(),
            Watch.listener(this::onPut, onError::accept));
  }

  /**
   * Reads the revoke requests addressed to this host and acts on each; returns the revision read
   * at. The keys name their target ({@code requests/FROM/HOST/ID}) but not as a prefix, so the
   * whole prefix is read keys only (paged) and only this host's requests are read with their
   * values, one key per request: what another host writes under its own {@code requests/FROM/}
   * costs this host its keys' bytes, never its values'.
   */
  long read() {
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
    GetOption at = GetOption.builder().withRevision(revision).build();
    for (int i = 0; i < mine.size(); i += REQUESTS_IN_FLIGHT) {
      List<ByteSequence> batch = mine.subList(i, Math.min(mine.size(), i + REQUESTS_IN_FLIGHT));
      List<CompletableFuture<GetResponse>> reads = new ArrayList<>();
      for (ByteSequence key : batch) {
        reads.add(link.client().getKVClient().get(key, at));
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
          if (!onRequest(kv)) {
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
      if (e.getEventType() == WatchEvent.EventType.PUT && !onRequest(e.getKeyValue())) {
        oversized.incrementAndGet();
      }
    }
  }

  /** Acts on a revoke request if it is addressed to this host; false if it was too large. */
  private boolean onRequest(KeyValue kv) {
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
      LOG.warn("a malformed revoke request from {} ignored: {}", from, e.getMessage());
      return true;
    }
    apply.accept(() -> requested(asked, from));
    return true;
  }

  private void requested(ClusterGrant asked, String from) {
    for (ClusterGrant g : grants.live()) {
      if (g.grantId() == asked.grantId()
          && g.expiresAt().equals(asked.expiresAt())
          && g.peer().equals(asked.peer())
          && grants.revoke(g.grantId(), ClusterGrantSync.ACTOR)) {
        LOG.info("grant {} revoked at the request of {}'s console", g.grantId(), from);
        return;
      }
    }
  }
}
