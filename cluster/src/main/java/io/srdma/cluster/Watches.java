package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Watches opened before the read they follow up. A watch started from a past revision (the one a
 * read was taken at, + 1) is cancelled if etcd's history was compacted past it meanwhile, and etcd
 * 3.4 lets any authenticated user compact (RBAC has no permission for it): a host compacting in a
 * loop cancelled every such watch, and the follower never settled. So a follower opens its watch
 * from etcd's current revision, waits until etcd says it is created, and only then reads what it
 * follows: every change after the watch's start is delivered, every earlier one is in the read
 * (some both, which the followers take as the same value twice), and no past revision is needed.
 *
 * <p>A watch ends only when its follower closes it. Any other end is a failure, reported to {@code
 * onError} like one: the stream ended cleanly (jetcd's {@code onCompleted}: etcd, a proxy in
 * between or a member ending it without an error, after which jetcd neither resumes it nor delivers
 * anything) or a response saying the watch was cancelled. Before, a clean end was ignored: the
 * follower heard nothing more (no revocation, no policy, no deleted grant key) and was never
 * re-read, while its node reported itself connected.
 *
 * <p>A watch that stays open but delivers nothing more is lost too: {@link WatchLiveness} asks each
 * watch opened here for progress and reports one whose stream does not answer in time the same way.
 * Progress notifications prove the stream; they are not handed to {@code onNext}.
 */
final class Watches {
  private Watches() {}

  /**
   * Opens a watch from the current revision and waits (at most the request timeout) until etcd
   * created it.
   *
   * @param option the watch's options; its start revision is left unset
   * @param onNext told of each response with events (not of the creation)
   * @param onError told when the watch fails or ends without being closed (a {@link
   *     ClusterException} {@code UNAVAILABLE} saying how, its reason escaped), after its creation
   *     or before; called from jetcd's threads, not for the {@link Watch.Watcher#close()} of the
   *     watcher returned
   * @throws ClusterException {@code UNAVAILABLE} if etcd did not create it in time, or ended or
   *     cancelled it first (it is closed)
   */
  static Watch.Watcher openNow(
      EtcdLink link,
      ByteSequence key,
      WatchOption.Builder option,
      Consumer<WatchResponse> onNext,
      Consumer<Throwable> onError,
      String what) {
    CompletableFuture<Void> created = new CompletableFuture<>();
    AtomicBoolean closing = new AtomicBoolean();
    AtomicBoolean failed = new AtomicBoolean();
    AtomicReference<WatchLiveness.Proof> proof = new AtomicReference<>();
    Consumer<ClusterException> lost =
        e -> {
          proof.get().stop();
          if (!closing.get()) {
            failed.set(true);
            // etcd's own error as the cause: a refusal stays a refusal (EtcdLink.await)
            created.completeExceptionally(e.getCause() == null ? e : e.getCause());
            onError.accept(e);
          }
        };
    proof.set(link.liveness().proof(what, lost));
    Watch.Watcher w =
        link.watches()
            .watch(
                key,
                option.withCreateNotify(true).build(),
                Watch.listener(
                    r -> {
                      if (!cancelled(r)) {
                        proof.get().heard(r.getHeader().getRevision());
                      }
                      if (cancelled(r)) {
                        // jetcd turns a cancellation into an error, except along with a creation
                        lost.accept(ended("etcd cancelled the watch", null));
                      } else if (r.isCreatedNotify()) {
                        created.complete(null); // again after jetcd resumes it: no news
                      } else if (!r.isProgressNotify()) {
                        onNext.accept(r);
                      }
                    },
                    t -> lost.accept(ended("the watch failed (" + reason(t.toString()) + ")", t)),
                    () -> {
                      // after a failure jetcd closes the watch itself: reported already
                      if (!failed.get()) {
                        lost.accept(ended("etcd ended the watch", null));
                      }
                    }));
    Watch.Watcher watcher =
        new Watch.Watcher() {
          @Override
          public void close() {
            closing.set(true); // jetcd tells onCompleted from within: no loss
            proof.get().stop();
            w.close();
          }

          @Override
          public boolean isClosed() {
            return w.isClosed();
          }

          @Override
          public void requestProgress() {
            w.requestProgress();
          }
        };
    try {
      link.await(created, what);
      proof.get().start(w);
    } catch (RuntimeException e) {
      watcher.close();
      throw e;
    }
    return watcher;
  }

  /**
   * Whether a response says the watch was cancelled. jetcd hides the flag, but a response that has
   * no events and is neither a creation nor a progress notification is a cancellation (jetcd's own
   * {@code isProgressNotify}, which needs the flag clear and a header revision, and {@code
   * isCreatedNotify} tell the rest apart).
   */
  static boolean cancelled(WatchResponse r) {
    return r.getEvents().isEmpty() && !r.isCreatedNotify() && !r.isProgressNotify();
  }

  private static ClusterException ended(String message, Throwable cause) {
    return new ClusterException(ClusterException.Reason.UNAVAILABLE, message, cause);
  }

  /** Text etcd (or whatever answers in its place) chose, fit for a log line. */
  private static String reason(String text) {
    if (text == null || text.isEmpty()) {
      return "no reason given";
    }
    return EtcdRange.escape(ByteSequence.from(text, StandardCharsets.UTF_8)); // clipped too
  }
}
