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
 * Follows one etcd key: watches it from etcd's current revision, then reads it, handing every new
 * value to a sink in revision order and never an older revision, nor the same one again once it is
 * settled. A watch that fails (etcd gone, history compacted) marks this follower broken; {@link
 * #resync()} (called by the cluster node when etcd answers again) reads the key afresh and watches
 * again, so whatever was written meanwhile is applied on recovery.
 *
 * <p>A value is settled when the sink put it in force or refused it for good ({@link
 * Outcome#APPLIED}, {@link Outcome#REFUSED}: a bad signature, a rollback, malformed content). A
 * sink that fails for a passing reason ({@link RetryLater}: a local state file that cannot be
 * written) or with any other exception leaves the value unsettled and marks the follower broken, so
 * a later probe's resync reads it again and hands it over again (after {@link #RETRY_FIRST},
 * doubling per failure up to {@link #RETRY_MAX}): a revocation list or policy refused once because
 * the disk was full comes into force once the disk recovers, without being published again. The
 * sinks' own checks (CRL number, policy serial) make handing over the same value again harmless.
 *
 * <p>A resync that finds etcd's revision below the last settled one (etcd restored from a snapshot
 * or replaced) forgets that revision, so values written after the restore are not dropped as old;
 * the sinks' number and serial checks still refuse anything older than what was applied.
 */
final class KeyWatch implements Follower {
  private static final Logger LOG = LoggerFactory.getLogger(KeyWatch.class);

  /** Receives each new value; called with the follower's lock held, never concurrently. */
  interface Sink {
    /**
     * Puts a value in force, or refuses it.
     *
     * @return whether it was applied or refused for good (it reports its refusals itself); either
     *     way the value is settled and not handed over again
     * @throws RetryLater if it could not be applied for a passing reason (handed over again at the
     *     next resync); any other exception is taken the same way
     */
    Outcome accept(byte[] value, long modRevision);
  }

  /** What a sink did with a value: either way it is settled. */
  enum Outcome {
    /** In force (or already was). */
    APPLIED,
    /** Refused for a reason that handing it over again would not change. */
    REFUSED
  }

  /**
   * A value could not be applied for a reason that may pass (a local file that cannot be written):
   * it is handed over again at the next resync.
   */
  static final class RetryLater extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RetryLater(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** The first wait before a value that failed is handed over again; it doubles per failure. */
  static final java.time.Duration RETRY_FIRST = java.time.Duration.ofMillis(250);

  /** The longest wait between two attempts at a value that keeps failing. */
  static final java.time.Duration RETRY_MAX = java.time.Duration.ofSeconds(30);

  /** At most one WARN per interval about the same value failing again. */
  private static final long RETRY_REPORT_NANOS = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);

  private final EtcdLink link;
  private final ByteSequence key;
  private final String what;
  private final Sink sink;
  // watch events arrive on jetcd's (Vert.x event loop) threads, which must never block: the sink
  // (a policy reload, a CRL update, a put to etcd) runs here instead
  private final Executor apply;
  private Watch.Watcher watcher;
  // the last settled revision (applied or refused for good); guarded by this
  private long applied;
  // the revision whose application last failed, and when that was last reported at WARN
  private long failedRevision;
  private long failedReportedAt;
  private int failures;
  private long retryAt; // nanoTime before which a failed value is not handed over again
  private String failedWhy;
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
   * Watches the key again (from etcd's current revision, once etcd created the watch), then reads
   * it and applies it if newer than what was settled: a change after the watch's start comes by the
   * watch (the same value twice is settled once), an earlier one is in the read, and no past
   * revision is asked for, so compacting etcd's history cannot cancel the watch.
   *
   * @throws ClusterException {@link ClusterException.Reason#UNAVAILABLE} if etcd does not answer
   *     (the caller marks the follower broken again)
   */
  @Override
  public synchronized void resync() {
    if (closed) {
      return;
    }
    // cleared before the read, not after the watch: a failure reported while this runs (the watch
    // failing, a value that could not be applied) marks it broken again and is not wiped
    broken = false;
    // the watch first, from the current revision, then the read: a watch from the read's revision
    // + 1 is cancelled if the history was compacted past it meanwhile (Watches)
    if (watcher != null) {
      watcher.close();
      watcher = null;
    }
    watcher =
        Watches.openNow(
            link, key, WatchOption.builder(), this::onNext, this::onError, "watching " + what);
    GetResponse r = link.await(link.client().getKVClient().get(key), "reading " + what);
    long current = r.getHeader().getRevision();
    if (current < applied) {
      // a linearizable read never answers below a revision this client saw, unless etcd went back
      LOG.warn(
          "etcd's revision went back from {} to {} (restored or replaced?): {} is read afresh; its"
              + " own checks still refuse anything older than what is in force",
          applied,
          current,
          what);
      applied = 0;
      failedRevision = 0;
    }
    if (!r.getKvs().isEmpty()) {
      KeyValue kv = r.getKvs().get(0);
      deliver(kv.getValue().getBytes(), kv.getModRevision());
    }
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

  @Override
  public synchronized String unapplied() {
    return failedRevision == 0
        ? null
        : what + " at etcd revision " + failedRevision + " is not in force: " + failedWhy;
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
    if (modRevision == failedRevision && System.nanoTime() - retryAt < 0) {
      broken = true; // backing off: handed over again at a later probe
      return;
    }
    Outcome outcome;
    try {
      outcome = sink.accept(value, modRevision);
    } catch (RuntimeException e) {
      // not settled: the next probe's resync reads it again and hands it over again
      broken = true;
      retryLater(modRevision, e);
      return;
    }
    if (failedRevision != 0) {
      LOG.info(
          "{} at etcd revision {} {} after {} failed attempt(s)",
          what,
          modRevision,
          outcome == Outcome.APPLIED ? "applied" : "refused",
          failures);
      failedRevision = 0;
    }
    applied = modRevision;
  }

  private void retryLater(long modRevision, RuntimeException e) {
    long now = System.nanoTime();
    boolean report = modRevision != failedRevision || now - failedReportedAt >= RETRY_REPORT_NANOS;
    failures = modRevision == failedRevision ? failures + 1 : 1;
    // 250 ms, doubling to at most RETRY_MAX: a failure that does not pass costs a few lines a
    // minute (the sink's own included), not four a second
    retryAt =
        now + Math.min(RETRY_MAX.toNanos(), RETRY_FIRST.toNanos() << Math.min(failures - 1, 16));
    failedRevision = modRevision;
    String why = e instanceof RetryLater ? e.getMessage() : e.toString();
    failedWhy = why;
    if (report) {
      failedReportedAt = now;
      String message =
          what
              + " at etcd revision "
              + modRevision
              + " could not be applied ("
              + why
              + "); what is in force stays, and it is retried (backing off to every "
              + RETRY_MAX.toSeconds()
              + " s) until it is";
      if (e instanceof RetryLater) {
        LOG.warn(message);
      } else {
        LOG.warn(message, e);
      }
    } else {
      LOG.debug(
          "{} at etcd revision {} could not be applied again (attempt {}): {}",
          what,
          modRevision,
          failures,
          why);
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
