package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows one etcd key: reads it, then watches it from the next revision, handing every new value
 * to a sink in revision order and never the same or an older revision twice. A watch that fails
 * (etcd gone, history compacted) marks this follower broken; {@link #resync()} (called by the
 * cluster node when etcd answers again) reads the key afresh and watches again, so whatever was
 * written meanwhile is applied on recovery.
 */
final class KeyWatch implements Follower {
  private static final Logger LOG = LoggerFactory.getLogger(KeyWatch.class);

  /** Receives each new value; called with the follower's lock held, never concurrently. */
  interface Sink {
    void accept(byte[] value, long modRevision);
  }

  private final EtcdLink link;
  private final ByteSequence key;
  private final String what;
  private final Sink sink;
  // watch events arrive on jetcd's (Vert.x event loop) threads, which must never block: the sink
  // (a policy reload, a CRL update, a put to etcd) runs here instead
  private final Executor apply;
  private Watch.Watcher watcher;
  private long applied;
  private volatile boolean broken = true;
  private volatile boolean closed;

  KeyWatch(EtcdLink link, ByteSequence key, String what, Sink sink, Executor apply) {
    this.apply = apply;
    this.link = link;
    this.key = key;
    this.what = what;
    this.sink = sink;
  }

  @Override
  public boolean broken() {
    return broken;
  }

  @Override
  public void markBroken() {
    broken = true;
  }

  /**
   * Reads the key, applies it if newer than what was applied, and watches again from there.
   *
   * @throws ClusterException {@link ClusterException.Reason#UNAVAILABLE} if etcd does not answer
   *     (the follower stays broken)
   */
  @Override
  public synchronized void resync() {
    if (closed) {
      return;
    }
    GetResponse r = link.await(link.client().getKVClient().get(key), "reading " + what);
    if (!r.getKvs().isEmpty()) {
      KeyValue kv = r.getKvs().get(0);
      deliver(kv.getValue().getBytes(), kv.getModRevision());
    }
    if (watcher != null) {
      watcher.close();
    }
    long from = r.getHeader().getRevision() + 1;
    watcher =
        link.client()
            .getWatchClient()
            .watch(
                key,
                WatchOption.builder().withRevision(from).build(),
                Watch.listener(this::onNext, this::onError));
    broken = false;
  }

  private void onNext(WatchResponse r) {
    try {
      apply.execute(() -> applyEvents(r));
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  private void applyEvents(WatchResponse r) {
    synchronized (this) {
      if (closed) {
        return;
      }
      for (WatchEvent e : r.getEvents()) {
        if (e.getEventType() == WatchEvent.EventType.PUT) {
          deliver(e.getKeyValue().getValue().getBytes(), e.getKeyValue().getModRevision());
        } else if (e.getEventType() == WatchEvent.EventType.DELETE) {
          LOG.warn("{} was deleted from etcd; what was applied last stays in force", what);
        }
      }
    }
  }

  private void onError(Throwable t) {
    if (!closed) {
      broken = true;
      LOG.warn("watch of {} failed ({}); it resumes when etcd answers again", what, t.toString());
    }
  }

  private void deliver(byte[] value, long modRevision) {
    if (modRevision <= applied) {
      return;
    }
    applied = modRevision;
    try {
      sink.accept(value, modRevision);
    } catch (RuntimeException e) {
      // the sink reports its own refusals; a follower that dies on one value follows no more
      LOG.error("applying {} at revision {} failed; still following", what, modRevision, e);
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (watcher != null) {
      watcher.close();
      watcher = null;
    }
  }
}
