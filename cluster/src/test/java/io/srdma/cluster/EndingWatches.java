package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * jetcd's watch client, with which a test ends the live watches the way jetcd tells its listener of
 * an end that the host did not ask for, and holds the watches asked for next until it lets them go
 * (so that what is written meanwhile can only be found by a read). A real etcd does not end a watch
 * cleanly on demand, a proxy in between or a compromised member may: so the watches are real ones
 * on a real etcd, and an end is told here exactly as jetcd tells it, nothing arriving after it.
 * Thread-safe.
 */
final class EndingWatches implements UnaryOperator<Watch> {
  /** How a watch ends. */
  enum End {
    /** The gRPC stream ended without an error: jetcd calls {@code onCompleted} and nothing else. */
    COMPLETED,
    /**
     * A response that creates and cancels the watch at once, which jetcd hands to {@code onNext}
     * (it turns other cancellations into errors).
     */
    CANCELLED
  }

  private final List<Live> live = new CopyOnWriteArrayList<>();
  private final AtomicInteger asked = new AtomicInteger();
  private volatile CountDownLatch hold;

  @Override
  public Watch apply(Watch real) {
    return new Watch() {
      @Override
      public Watcher watch(ByteSequence key, WatchOption option, Listener listener) {
        asked.incrementAndGet();
        CountDownLatch h = hold;
        if (h != null) {
          try {
            h.await(60, TimeUnit.SECONDS); // bounded: the test fails before
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
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

  /** The watches asked for from now on wait until {@link #release()}. */
  void hold() {
    hold = new CountDownLatch(1);
  }

  /** Lets the held watches go, and the later ones through. */
  void release() {
    CountDownLatch h = hold;
    hold = null;
    if (h != null) {
      h.countDown();
    }
  }

  /**
   * Ends every watch that is open (not closed by the host, not ended before) as {@code how} says.
   *
   * @return how many were ended
   */
  int endAll(End how) {
    int n = 0;
    for (Live l : live) {
      if (l.end(how)) {
        n++;
      }
    }
    return n;
  }

  private static final class Live implements Watch.Listener, Watch.Watcher {
    private final Watch.Listener listener;
    private volatile Watch.Watcher watcher;
    private boolean ended; // guarded by this
    private volatile boolean closed;

    Live(Watch.Listener listener) {
      this.listener = listener;
    }

    boolean end(End how) {
      synchronized (this) {
        if (ended || closed || watcher == null) {
          return false;
        }
        ended = true;
      }
      watcher.close(); // etcd's side of it is gone: nothing of it reaches the host any more
      if (how == End.COMPLETED) {
        listener.onCompleted();
      } else {
        listener.onNext(
            new WatchResponse(
                io.etcd.jetcd.api.WatchResponse.newBuilder()
                    .setCreated(true)
                    .setCanceled(true)
                    .setWatchId(1)
                    .setCancelReason("canceled by\nthe server")
                    .build()));
      }
      return true;
    }

    private synchronized boolean gone() {
      return ended;
    }

    @Override
    public void onNext(WatchResponse response) {
      if (!gone()) {
        listener.onNext(response);
      }
    }

    @Override
    public void onError(Throwable throwable) {
      if (!gone()) {
        listener.onError(throwable);
      }
    }

    @Override
    public void onCompleted() {
      if (!gone()) {
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
      watcher.requestProgress();
    }
  }
}
