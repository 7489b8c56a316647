package io.srdma.cluster;

import io.etcd.jetcd.Watch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides, rather than assumes, that each open watch still delivers. A watch can stay open and
 * silently deliver nothing more: a proxy in between that stopped forwarding, a half-open connection
 * whose keepalive is answered by something else, a member cut off from the others that keeps the
 * stream up and serves its own stale revision. Its host heard no revocation, no policy, no deleted
 * grant, while it reported itself connected.
 *
 * <p>So every {@link #period} each open watch is asked for progress (etcd's {@code
 * WatchProgressRequest}, one small message on the watch's own stream, answered from etcd's memory).
 * A response on the stream (a progress notification or events) whose header revision is at least
 * the revision the host last read from etcd directly ({@link #check}'s {@code readRevision}, when
 * the question was asked) proves the watch alive and current. A question that no such response
 * answers within {@link #deadline} (the request timeout: what any other etcd request is given) is a
 * lost watch, reported like an ended one ({@link Watches}): its follower watches again and
 * re-reads, so whatever was written during the silence is in force afterwards. A response behind
 * that revision (a member catching up) is not yet a failure: the question is asked again each
 * period until the deadline, so a slow member that catches up is not restarted.
 *
 * <p>A watch found silent is counted ({@link #silent()}), and its follower's watch stays unproven
 * ({@link #unproven()}, which keeps the node DEGRADED) until a watch opened for it afterwards
 * answered a question: a proxy that swallows every new watch too keeps the node DEGRADED rather
 * than flapping back to CONNECTED at each re-watch.
 *
 * <p>Thread-safe: {@link #check} runs on one thread (the node's probe), responses are heard on
 * jetcd's threads.
 */
final class WatchLiveness {
  private static final Logger LOG = LoggerFactory.getLogger(WatchLiveness.class);

  private final Duration period;
  private final Duration deadline;
  private final Set<Proof> open = ConcurrentHashMap.newKeySet();
  private final AtomicLong silent = new AtomicLong();
  private final AtomicLong answered = new AtomicLong();
  // what a silent watch followed -> why and when it was found silent; guarded by this
  private final Map<String, Suspect> suspects = new LinkedHashMap<>();

  private record Suspect(String why, long sinceNanos) {}

  WatchLiveness(Duration period, Duration deadline) {
    this.period = period;
    this.deadline = deadline;
  }

  /**
   * A proof for a watch about to be opened: tell it of every response ({@link Proof#heard}), start
   * it once etcd created the watch and stop it when the watch is closed or lost.
   *
   * @param what the watch, for the node's status (e.g. {@code watching the revocation list})
   * @param lost told (once) when the watch is found silent; the proof is stopped by then
   */
  Proof proof(String what, Consumer<ClusterException> lost) {
    return new Proof(what, lost);
  }

  /** Watches found silent since start. */
  long silent() {
    return silent.get();
  }

  /** Questions answered since start (tests: a live watch was asked, and answered). */
  long answered() {
    return answered.get();
  }

  /**
   * Why a watch is not proven, or null: each follower one of whose watches was found silent and
   * none of whose watches opened since has answered a question yet.
   */
  synchronized String unproven() {
    if (suspects.isEmpty()) {
      return null;
    }
    List<String> each = new ArrayList<>();
    suspects.forEach((what, s) -> each.add(what + ": " + s.why()));
    return "a watch went silent and is not proven since ("
        + String.join("; ", each)
        + "); watched again and re-read";
  }

  /**
   * Asks each open watch for progress once per period, fails those whose question went unanswered
   * past the deadline, and clears the suspects that answered since. Called often (each probe); does
   * work only as the period says.
   *
   * @param nowNanos {@link System#nanoTime()}
   * @param readRevision the revision of the host's last direct read from etcd
   */
  void check(long nowNanos, long readRevision) {
    for (Proof p : open) {
      String why = p.verdict(nowNanos, readRevision);
      if (why != null) {
        synchronized (this) {
          suspects.put(p.what, new Suspect(why, nowNanos));
        }
        long n = silent.incrementAndGet();
        LOG.warn(
            "a watch went silent ({}: {}); watching again and re-reading ({} silent watch(es) since"
                + " start)",
            p.what,
            why,
            n);
        p.lost.accept(new ClusterException(ClusterException.Reason.UNAVAILABLE, why));
      }
    }
    synchronized (this) {
      suspects
          .entrySet()
          .removeIf(
              e -> {
                for (Proof p : open) {
                  if (p.what.equals(e.getKey()) && p.provenSince(e.getValue().sinceNanos())) {
                    LOG.info("{} answers again", e.getKey());
                    return true;
                  }
                }
                return false;
              });
    }
  }

  /** The liveness of one watch. Thread-safe. */
  final class Proof {
    private final String what;
    private final Consumer<ClusterException> lost;
    private Watch.Watcher watcher; // guarded by this
    private boolean started; // guarded by this
    private boolean stopped; // guarded by this
    private long heard; // the highest header revision heard; guarded by this
    private boolean heardSinceAsked; // a response came while asking; guarded by this
    private boolean asking; // a question is open; guarded by this
    private long askedAt; // when the open question was first asked; guarded by this
    private long sentAt; // when the last question was sent (or the watch started); guarded by this
    private long target; // the revision the open question needs; guarded by this
    private boolean proven; // a question was answered; guarded by this
    private long provenAskedAt; // when the last answered question was asked; guarded by this

    private Proof(String what, Consumer<ClusterException> lost) {
      this.what = what;
      this.lost = lost;
    }

    /** A response with this header revision arrived on the watch's stream. */
    void heard(long revision) {
      boolean answer;
      synchronized (this) {
        heard = Math.max(heard, revision);
        heardSinceAsked |= asking;
        answer = asking && revision >= target;
        if (answer) {
          asking = false;
          proven = true;
          provenAskedAt = askedAt;
        }
      }
      if (answer) {
        answered.incrementAndGet();
      }
    }

    /** etcd created the watch: it is asked from one period on. */
    void start(Watch.Watcher w) {
      synchronized (this) {
        if (stopped) {
          return;
        }
        watcher = w;
        started = true;
        sentAt = System.nanoTime();
      }
      open.add(this);
    }

    /** The watch is closed or lost: no more questions. */
    void stop() {
      synchronized (this) {
        stopped = true;
        watcher = null;
      }
      open.remove(this);
    }

    private synchronized boolean provenSince(long nanos) {
      return proven && provenAskedAt - nanos > 0;
    }

    /** Asks if due; the reason it failed, or null. */
    private String verdict(long now, long readRevision) {
      Watch.Watcher ask;
      synchronized (this) {
        if (stopped || !started) {
          return null;
        }
        if (asking && now - askedAt >= deadline.toNanos()) {
          stopped = true;
          open.remove(this);
          return heardSinceAsked
              ? "its stream answered from revision "
                  + heard
                  + " but not from revision "
                  + target
                  + ", which this host read, within "
                  + deadline
              : "etcd did not answer a progress request on it within " + deadline;
        }
        if (now - sentAt < period.toNanos()) {
          return null;
        }
        if (!asking) {
          asking = true;
          askedAt = now;
          target = readRevision;
          heardSinceAsked = false;
        }
        sentAt = now;
        ask = watcher;
      }
      try {
        ask.requestProgress(); // outside the lock: jetcd writes to the stream
      } catch (RuntimeException e) {
        // the stream is going away: the question stays open, and the deadline decides
        LOG.debug("progress request on {} not sent: {}", what, e.toString());
      }
      return null;
    }
  }
}
