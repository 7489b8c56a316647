package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Watches opened before the read they follow up. A watch started from a past revision (the one a
 * read was taken at, + 1) is cancelled if etcd's history was compacted past it meanwhile, and etcd
 * 3.4 lets any authenticated user compact (RBAC has no permission for it): a host compacting in a
 * loop cancelled every such watch, and the follower never settled. So a follower opens its watch
 * from etcd's current revision, waits until etcd says it is created, and only then reads what it
 * follows: every change after the watch's start is delivered, every earlier one is in the read
 * (some both, which the followers take as the same value twice), and no past revision is needed.
 */
final class Watches {
  private Watches() {}

  /**
   * Opens a watch from the current revision and waits (at most the request timeout) until etcd
   * created it.
   *
   * @param option the watch's options; its start revision is left unset
   * @param onNext told of each response with events (not of the creation)
   * @param onError told when the watch fails, after its creation or before
   * @throws ClusterException {@code UNAVAILABLE} if etcd did not create it in time (it is closed)
   */
  static Watch.Watcher openNow(
      EtcdLink link,
      ByteSequence key,
      WatchOption.Builder option,
      Consumer<WatchResponse> onNext,
      Consumer<Throwable> onError,
      String what) {
    CompletableFuture<Void> created = new CompletableFuture<>();
    Watch.Watcher w =
        link.client()
            .getWatchClient()
            .watch(
                key,
                option.withCreateNotify(true).build(),
                Watch.listener(
                    r -> {
                      if (r.isCreatedNotify()) {
                        created.complete(null); // again after jetcd resumes it: no news
                      } else {
                        onNext.accept(r);
                      }
                    },
                    t -> {
                      created.completeExceptionally(t);
                      onError.accept(t);
                    }));
    try {
      link.await(created, what);
    } catch (RuntimeException e) {
      w.close();
      throw e;
    }
    return w;
  }
}
