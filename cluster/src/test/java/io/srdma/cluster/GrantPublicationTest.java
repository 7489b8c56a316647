package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.PutOption;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Publishing a grant when etcd's answer does not come back as sent: the write landed but its answer
 * was lost (the connection failed after the request left), etcd refused it, or its answer came
 * late. A console that deletes the key in the meantime must still revoke the grant: no revocation
 * is lost to the host not knowing what it wrote.
 */
@Timeout(120)
class GrantPublicationTest {
  private static final String PREFIX = "/srdma/publication";
  private static final String HOST = "h4";

  private enum Answer {
    AS_IS,
    LOSE,
    REFUSE_ONCE,
    HOLD
  }

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private EtcdLink console;
  private EtcdLink hostLink;
  private ScheduledExecutorService apply;
  private ClusterGrantSync sync;
  private final FakeGrants grants = new FakeGrants(HOST);
  private volatile Answer answer = Answer.AS_IS;
  private volatile long lastLease;
  private final CompletableFuture<Void> release = new CompletableFuture<>();

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
    hostLink = EtcdLink.open(etcd.clientConfig(PREFIX, HOST));
    apply =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "test-cluster-apply");
              t.setDaemon(true);
              return t;
            });
    sync =
        new ClusterGrantSync(
            hostLink, HOST, grants, apply, () -> true, Clock.systemUTC(), this::write);
    sync.resync();
    sync.start();
  }

  @AfterEach
  void stop() throws Exception {
    release.complete(null);
    if (sync != null) {
      sync.close();
    }
    if (apply != null) {
      apply.shutdownNow();
      apply.awaitTermination(5, TimeUnit.SECONDS);
    }
    for (EtcdLink l : new EtcdLink[] {hostLink, console}) {
      if (l != null) {
        l.close();
      }
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  /** The real write, whose answer the test loses, refuses or holds. */
  private CompletableFuture<Long> write(ByteSequence key, ByteSequence value, long lease) {
    Answer a = answer;
    if (a == Answer.REFUSE_ONCE) {
      answer = Answer.AS_IS;
      return CompletableFuture.failedFuture(
          new StatusRuntimeException(Status.PERMISSION_DENIED.withDescription("refused by test")));
    }
    lastLease = lease;
    CompletableFuture<Long> real =
        hostLink
            .client()
            .getKVClient()
            .put(key, value, PutOption.builder().withLeaseId(lease).build())
            .thenApply(p -> p.getHeader().getRevision());
    return switch (a) {
      case LOSE ->
          real.thenCompose(
              r ->
                  CompletableFuture.failedFuture(
                      new StatusRuntimeException(
                          Status.UNAVAILABLE.withDescription("answer lost by the test"))));
      case HOLD -> real.thenCombine(release, (r, v) -> r);
      default -> real;
    };
  }

  private KeyValue key(long id) {
    List<KeyValue> kvs =
        console
            .await(console.client().getKVClient().get(console.keys().grant(HOST, id)), "reading")
            .getKvs();
    return kvs.isEmpty() ? null : kvs.get(0);
  }

  private void settle() throws Exception {
    apply.submit(() -> {}).get(5, TimeUnit.SECONDS);
  }

  @Test
  void shouldRevokeAGrantWhoseLostPublicationWasDeletedBeforeTheHostReadItsKeys() throws Exception {
    answer = Answer.LOSE;
    grants.issue(5, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 5 written", () -> key(5) != null);
    Await.until(Duration.ofSeconds(5), "the lost answer noticed", sync::broken);
    answer = Answer.AS_IS;
    sync.closeWatches(); // the connection that lost the answer took the watch with it
    assertTrue(GrantDirectory.revoke(console, HOST, 5));
    sync.resync(); // as the next probe does
    Await.until(Duration.ofSeconds(2), "grant 5 revoked", () -> grants.revoked.containsKey(5L));
    assertEquals(ClusterGrantSync.ACTOR, grants.revoked.get(5L));
    Thread.sleep(ClusterGrantSync.PERIOD.toMillis() * 3);
    assertEquals(null, key(5), "not published again");
  }

  @Test
  void shouldAdoptALostPublicationThatLandedAndWithdrawItsLeaseAtTheEnd() throws Exception {
    answer = Answer.LOSE;
    grants.issue(6, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 6 written", () -> key(6) != null);
    Await.until(Duration.ofSeconds(5), "the lost answer noticed", sync::broken);
    long lease = lastLease;
    answer = Answer.AS_IS;
    sync.resync();
    settle();
    Thread.sleep(ClusterGrantSync.PERIOD.toMillis() * 3);
    assertFalse(grants.revoked.containsKey(6L), "it was written: nothing to revoke");
    assertEquals(lease, key(6).getLease(), "kept under the lease it was sent with");
    grants.live.remove(6L); // ends on the host: its lease (learned from the read) is revoked
    Await.until(Duration.ofSeconds(5), "grant 6 withdrawn", () -> key(6) == null);
  }

  @Test
  void shouldPublishAgainAfterARefusalWithoutRevoking() throws Exception {
    answer = Answer.REFUSE_ONCE;
    grants.issue(7, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 7 written on the next try", () -> key(7) != null);
    assertFalse(sync.broken(), "a refusal wrote nothing: nothing to settle");
    settle();
    assertFalse(grants.revoked.containsKey(7L));
  }

  @Test
  void shouldRevokeAGrantDeletedBeforeItsPublicationWasAnswered() throws Exception {
    answer = Answer.HOLD;
    grants.issue(8, Duration.ofMinutes(5));
    Await.until(Duration.ofSeconds(5), "grant 8 written", () -> key(8) != null);
    sync.closeWatches(); // not watching: only the read and the answer's revision can tell
    assertTrue(GrantDirectory.revoke(console, HOST, 8));
    sync.markBroken();
    sync.resync(); // a read that does not list it, before the answer
    release.complete(null);
    Await.until(Duration.ofSeconds(2), "grant 8 revoked", () -> grants.revoked.containsKey(8L));
  }
}
