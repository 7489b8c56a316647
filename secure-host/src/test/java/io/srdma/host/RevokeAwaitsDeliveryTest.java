package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * When {@code host.revoke} (or a policy reload) returns, no record of the ended grant is being
 * delivered to the region's listener and none will be: a record the opener took before the end (its
 * bytes landed before the window's invalidation) is waited for. Bounded by {@code requestTimeout};
 * a listener revoking the grant of the record it is given does not wait for itself.
 */
@Timeout(120)
class RevokeAwaitsDeliveryTest {
  @TempDir Path dir;

  /**
   * A listener that holds the first record it is given until {@link #release}: {@link #stuckOn}
   * writes one record through a fresh WRITE grant and returns the grant once the listener holds it.
   */
  static final class StuckListener implements RecordListener {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger delivered = new AtomicInteger();
    final AtomicLong lastDeliveryEnd = new AtomicLong();

    @Override
    public void onRecord(ReceivedRecord r) {
      delivered.incrementAndGet();
      entered.countDown();
      try {
        release.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      lastDeliveryEnd.set(System.nanoTime());
    }

    RemoteGrant stuckOn(ChannelRig rig) throws Exception {
      rig.acmeKv.onRecord(this);
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      RemoteGrant g =
          acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
      g.write(0, ChannelRig.bytes(100, 1));
      assertTrue(entered.await(30, TimeUnit.SECONDS), "the record reached the listener");
      return g;
    }

    void release() {
      release.countDown();
    }
  }

  private static CompletableFuture<Boolean> revokeAsync(ChannelRig rig, long grantId) {
    return CompletableFuture.supplyAsync(() -> rig.host.revoke(grantId, "operator"));
  }

  @Test
  void shouldReturnOnlyOnceTheRecordBeingDeliveredIsDone() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      StuckListener listener = new StuckListener();
      RemoteGrant g = listener.stuckOn(rig);
      CompletableFuture<Boolean> revoke = revokeAsync(rig, g.id());
      try {
        revoke.get(500, TimeUnit.MILLISECONDS);
        throw new AssertionError("revoke returned while a record of the grant was delivered");
      } catch (TimeoutException expected) {
        // waits for the listener
      }
      listener.release();
      assertTrue(revoke.get(30, TimeUnit.SECONDS));
      long returned = System.nanoTime();
      long end = listener.lastDeliveryEnd.get();
      assertTrue(end != 0 && end - returned <= 0, "the delivery ended before revoke returned");
      assertEquals(1, listener.delivered.get());
      assertFalse(rig.host.revoke(g.id(), "operator"), "ended");
    }
  }

  @Test
  void shouldReturnFromAReloadOnlyOnceTheRecordBeingDeliveredIsDone() throws Exception {
    String sample;
    try (var in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String from = "max-bytes-per-grant: 16MiB";
    assertTrue(sample.contains(from));
    Policy strict =
        new PolicyLoader()
            .parse(
                "strict.yaml",
                sample.replace(from, "max-bytes-per-grant: 1KiB").getBytes(StandardCharsets.UTF_8));
    try (ChannelRig rig = new ChannelRig(dir)) {
      StuckListener listener = new StuckListener();
      listener.stuckOn(rig);
      CompletableFuture<Integer> reload =
          CompletableFuture.supplyAsync(
              () -> rig.host.reloadPolicy(strict, "operator").forbidden().size());
      try {
        reload.get(500, TimeUnit.MILLISECONDS);
        throw new AssertionError("the reload returned while a record of its grant was delivered");
      } catch (TimeoutException expected) {
        // waits for the listener
      }
      listener.release();
      assertEquals(1, reload.get(30, TimeUnit.SECONDS));
    }
  }

  @Test
  void shouldNotWaitForItselfWhenAListenerRevokesTheGrantOfItsRecord() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      AtomicReference<Object> outcome = new AtomicReference<>();
      CountDownLatch done = new CountDownLatch(1);
      rig.acmeKv.onRecord(
          r -> {
            long t0 = System.nanoTime();
            boolean revoked = rig.host.revoke(r.grantId(), "listener");
            outcome.set(revoked ? Duration.ofNanos(System.nanoTime() - t0) : "not revoked");
            done.countDown();
          });
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      RemoteGrant g =
          acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
      g.write(0, ChannelRig.bytes(100, 1));
      assertTrue(done.await(30, TimeUnit.SECONDS), "the listener's revoke returned");
      Object o = outcome.get();
      assertTrue(o instanceof Duration, "revoked from the listener: " + o);
      assertTrue(((Duration) o).compareTo(Duration.ofSeconds(2)) < 0, "no wait for itself: " + o);
    }
  }

  @Test
  void shouldStopWaitingAfterTheRequestTimeout() throws Exception {
    Duration requestTimeout = ChannelRig.scaled(Duration.ofMillis(800));
    try (ChannelRig rig = new ChannelRig(dir, o -> o.requestTimeout(requestTimeout))) {
      StuckListener listener = new StuckListener();
      RemoteGrant g = listener.stuckOn(rig);
      long t0 = System.nanoTime();
      try {
        assertTrue(revokeAsync(rig, g.id()).get(30, TimeUnit.SECONDS));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertTrue(took.compareTo(requestTimeout.multipliedBy(9).dividedBy(10)) >= 0, "" + took);
      } finally {
        listener.release();
      }
    }
  }
}
