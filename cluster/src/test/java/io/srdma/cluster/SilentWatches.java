package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.api.ResponseHeader;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * jetcd's watch client, with which a test makes the open watches go silent while they stay open:
 * nothing after that reaches the host, and nothing tells it the watch is gone (no error, no end).
 * That is what a proxy that stopped forwarding, or a half-open connection, looks like from the
 * host; or, {@link Silence#STALE}, a member cut off from the others that keeps the stream up and
 * answers progress requests from its own frozen revision. The watches are real ones on a real etcd;
 * the watches opened afterwards are left alone. Thread-safe.
 */
final class SilentWatches implements UnaryOperator<Watch> {
  /** How a watch goes silent. */
  enum Silence {
    /** Nothing more arrives: no events, no answer to a progress request. */
    MUTE,
    /**
     * Progress requests are answered, with the revision the stream had when it went silent; no
     * events arrive.
     */
    STALE
  }

  private final List<Live> live = new CopyOnWriteArrayList<>();
  private final AtomicInteger asked = new AtomicInteger();

  @Override
  public Watch apply(Watch real) {
    return new Watch() {
      @Override
      public Watcher watch(ByteSequence key, WatchOption option, Listener listener) {
        asked.incrementAndGet();
        Live l = new Live(listener);
        live.add(l);
        l.watcher = real.watch(key, option, l);
        return l;
      }

      @Override
      public void requestProgress() {
        real.requestProgress();
      }

      @Override
      public void close() {
        real.close();
      }
    };
  }

  /** Watches asked for so far. */
  int asked() {
    return asked.get();
  }

  /**
   * Silences every watch that is open (not closed by the host, not silenced before).
   *
   * @return how many
   */
  int silenceAll(Silence how) {
    int n = 0;
    for (Live l : live) {
      if (l.silence(how)) {
        n++;
      }
    }
    return n;
  }

  private static final class Live implements Watch.Listener, Watch.Watcher {
    private final Watch.Listener listener;
    private volatile Watch.Watcher watcher;
    private volatile Silence silence;
    private volatile long heard; // the highest header revision that reached the host
    private volatile boolean closed;

    Live(Watch.Listener listener) {
      this.listener = listener;
    }

    synchronized boolean silence(Silence how) {
      if (silence != null || closed || watcher == null) {
        return false;
      }
      silence = how;
      return true;
    }

    @Override
    public void onNext(WatchResponse response) {
      Silence s;
      synchronized (this) {
        s = silence;
        if (s == null) {
          heard = Math.max(heard, response.getHeader().getRevision());
        }
      }
      if (s == null) {
        listener.onNext(response);
      } else if (s == Silence.STALE && response.isProgressNotify()) {
        listener.onNext(
            new WatchResponse(
                io.etcd.jetcd.api.WatchResponse.newBuilder()
                    .setHeader(ResponseHeader.newBuilder().setRevision(heard))
                    .setWatchId(-1)
                    .build()));
      }
    }

    @Override
    public void onError(Throwable throwable) {
      if (silence == null) {
        listener.onError(throwable);
      }
    }

    @Override
    public void onCompleted() {
      // a close by the host is told (jetcd does it from within close()); a silent stream tells
      // nothing
      if (silence == null || closed) {
        listener.onCompleted();
      }
    }

    @Override
    public void close() {
      closed = true;
      watcher.close();
    }

    @Override
    public boolean isClosed() {
      return closed || watcher.isClosed();
    }

    @Override
    public void requestProgress() {
      watcher.requestProgress(); // it reaches etcd; the answer is what goes astray
    }
  }
}
