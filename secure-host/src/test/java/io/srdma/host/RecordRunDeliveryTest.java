package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import io.srdma.channel.WriteResult;
import io.srdma.keys.RekeyPolicy;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The honest side of record runs (docs/protocol.md): whatever an honest client posts — writes of
 * many records in flight at once (sealed on several threads), batches whose pieces are end to end
 * or a byte apart, rekeys every few dozen records, a receive depth of 2 to 64, records small enough
 * for 16 to a run or big enough for the 64 KiB to cut it — every record is delivered exactly once,
 * in order, intact and at its offset, nothing is rejected, and runs take fewer notifications than
 * records. Seeded: a failure names its seed and reproduces.
 */
@Timeout(120)
class RecordRunDeliveryTest {
  private static final int GRANT = 1 << 20;

  @TempDir Path dir;

  record Sent(long offset, byte[] payload) {}

  @ParameterizedTest(name = "payload {0}, receive depth {1}, seed {2}")
  @CsvSource({"100, 64, 4", "256, 8, 1", "3000, 4, 5", "20000, 16, 3", "256, 2, 2"})
  void shouldDeliverEveryRecordOnceInOrder(int maxPayload, int depth, long seed) throws Exception {
    try (ChannelRig rig =
        new ChannelRig(dir, o -> o.maxRecordPayload(maxPayload).receiveDepth(depth))) {
      List<Sent> got = new CopyOnWriteArrayList<>();
      rig.acmeKv.onRecord(
          r -> {
            byte[] b = new byte[r.payload().remaining()];
            r.payload().get(b);
            got.add(new Sent(r.offset(), b));
          });
      SecureRdmaClient c =
          rig.track(
              SecureRdmaClient.connect(
                  rig.options("acme", "trainer-2")
                      .maxRecordPayload(maxPayload)
                      .stagingSlots(64)
                      .sealingThreads(3)
                      .rekeyPolicy(RekeyPolicy.fromSystemProperties().withMaxRecords(37))));
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, GRANT, Duration.ofMinutes(1));
      Random rnd = new Random(seed);
      int sealed = maxPayload + SealedLayout.RECORD_OVERHEAD;
      long span = 7L * sealed; // room each write or batch gets, so none overlaps one in flight
      long notifications = rig.host.stats().writeNotifications();
      List<Sent> sent = new ArrayList<>();
      List<CompletableFuture<Void>> pending = new ArrayList<>();
      long at = 0;
      for (int i = 0; i < 150; i++) {
        if (at + span > GRANT) {
          // the grant is used up: let what is in flight land before anything is written over it
          awaitAll(pending);
          int n = sent.size();
          ChannelRig.await(() -> got.size() >= n, "the records written before " + n);
          at = 0;
        }
        if (rnd.nextBoolean()) {
          byte[] data = bytes(rnd, 1 + rnd.nextInt(6 * maxPayload));
          pending.add(g.write(at, ByteBuffer.wrap(data)).toCompletableFuture());
          for (int k = 0; k * maxPayload < data.length; k++) {
            int from = k * maxPayload;
            int to = Math.min(data.length, from + maxPayload);
            sent.add(new Sent(at + (long) k * sealed, Arrays.copyOfRange(data, from, to)));
          }
        } else {
          int pieces = 1 + rnd.nextInt(Math.min(5, depth / 2 + 1)); // within the post list's room
          WriteBatch batch = new WriteBatch(pieces);
          long rel = at;
          for (int k = 0; k < pieces; k++) {
            byte[] data = bytes(rnd, 1 + rnd.nextInt(maxPayload));
            assertTrue(batch.add(rel, ByteBuffer.wrap(data), 0, data.length));
            sent.add(new Sent(rel, data));
            rel += data.length + SealedLayout.RECORD_OVERHEAD + (rnd.nextInt(4) == 0 ? 1 : 0);
          }
          long r = WriteResult.BACK_PRESSURED;
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
          while (r == WriteResult.BACK_PRESSURED && System.nanoTime() - deadline < 0) {
            r = g.tryWriteBatch(batch);
            Thread.onSpinWait();
          }
          assertTrue(r > 0, "batch " + i + ": " + r);
        }
        at += span;
      }
      awaitAll(pending);
      ChannelRig.await(
          () -> got.size() >= sent.size(), sent.size() + " records (seed " + seed + ")");
      assertEquals(sent.size(), got.size(), "each delivered once");
      for (int i = 0; i < sent.size(); i++) {
        assertEquals(sent.get(i).offset(), got.get(i).offset(), "record " + i + " in order");
        assertArrayEquals(sent.get(i).payload(), got.get(i).payload(), "record " + i + " intact");
      }
      assertEquals(0, rig.host.stats().recordsRejected(), "nothing of an honest client rejected");
      long taken = rig.host.stats().writeNotifications() - notifications;
      assertTrue(taken < sent.size(), sent.size() + " records took " + taken + " notifications");
      assertTrue(c.epoch() > 1, "rekeyed meanwhile: epoch " + c.epoch());
    }
  }

  private static void awaitAll(List<CompletableFuture<Void>> pending) throws Exception {
    for (CompletableFuture<Void> f : pending) {
      f.get(30, TimeUnit.SECONDS);
    }
    pending.clear();
  }

  private static byte[] bytes(Random rnd, int n) {
    byte[] b = new byte[n];
    rnd.nextBytes(b);
    return b;
  }
}
