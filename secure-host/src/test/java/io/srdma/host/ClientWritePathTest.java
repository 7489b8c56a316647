package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import io.srdma.channel.WriteResult;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The non-allocating write path: batches, result codes, and the shared device context. */
class ClientWritePathTest {
  @TempDir Path dir;

  private static byte[] bytes(int n, int seed) {
    return ChannelRig.bytes(n, seed).array();
  }

  @Test
  void contiguousPiecesOfABatchArriveAsOneRecordAndTheOthersAsTheirOwn() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
      byte[] a = bytes(5, 1);
      byte[] b = bytes(7, 2);
      byte[] d = bytes(20, 3);
      byte[] apart = bytes(10, 4);
      ByteBuffer direct = ByteBuffer.allocateDirect(64);
      direct.put(3, b); // a piece taken from the middle of a direct buffer
      WriteBatch batch = new WriteBatch(8);
      assertTrue(batch.add(0, ByteBuffer.wrap(a), 0, a.length));
      assertTrue(batch.add(5, direct, 3, b.length));
      assertTrue(batch.add(12, ByteBuffer.wrap(d), 0, d.length));
      assertTrue(batch.add(1024, ByteBuffer.wrap(apart), 0, apart.length));
      AtomicLong told = new AtomicLong();
      c.onWritesCompleted(
          (p, status) -> {
            if (status == WcStatus.SUCCESS) {
              told.accumulateAndGet(p, Math::max);
            }
          });
      long before = c.postedPosition();
      long position = g.tryWriteBatch(batch);
      assertEquals(before + 2, position, "two records: the contiguous run and the apart piece");
      ChannelRig.await(() -> c.completedPosition() >= position, "batch completed");
      ChannelRig.await(() -> told.get() >= position, "the completion handler was told");
      ChannelRig.await(() -> rig.acmeRecords.size() == 2, "two records opened");
      byte[] joined = ByteBuffer.allocate(32).put(a).put(b).put(d).array();
      assertArrayEquals(joined, rig.acmeRecords.get(0));
      assertArrayEquals(apart, rig.acmeRecords.get(1));
      assertEquals(2, rig.host.stats().recordsOpened());
    }
  }

  @Test
  void aPieceOutOfTheGrantRefusesTheWholeBatchAndPostsNothing() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      WriteBatch batch = new WriteBatch(4);
      batch.add(0, ByteBuffer.wrap(bytes(8, 1)), 0, 8);
      batch.add(4090, ByteBuffer.wrap(bytes(8, 2)), 0, 8); // its record would end past 4096
      long before = c.postedPosition();
      assertEquals(WriteResult.OUT_OF_BOUNDS, g.tryWriteBatch(batch));
      assertEquals(before, c.postedPosition(), "nothing posted");
      batch.clear();
      batch.add(0, ByteBuffer.wrap(bytes(8, 1)), 0, 8);
      batch.add(8, ByteBuffer.wrap(bytes(Short.MAX_VALUE * 2, 3)), 0, Short.MAX_VALUE * 2);
      assertEquals(
          WriteResult.INVALID_ARGUMENT, g.tryWriteBatch(batch), "a run longer than one record");
      batch.clear();
      batch.add(0, ByteBuffer.wrap(bytes(8, 1)), 0, 8);
      batch.add(20, ByteBuffer.wrap(bytes(8, 2)), 0, 8); // inside the first record's tag
      assertEquals(WriteResult.INVALID_ARGUMENT, g.tryWriteBatch(batch), "overlapping records");
      assertEquals(before, c.postedPosition(), "nothing posted");
      // a later good write is the first record the host sees: the refused pieces never left
      byte[] good = bytes(16, 9);
      long p = g.tryWrite(64, ByteBuffer.wrap(good), 0, good.length);
      assertTrue(p > 0, WriteResult.name(p));
      ChannelRig.await(() -> rig.acmeRecords.size() == 1, "the good record opened");
      assertArrayEquals(good, rig.acmeRecords.get(0));
      assertEquals(1, rig.host.stats().recordsOpened());
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aBatchSealsRunsAdjacentInOneBufferStraightAndGathersTheOthers() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
      byte[] text = bytes(600, 21);
      // a slice (array offset 7), its position and limit elsewhere than the pieces
      ByteBuffer heap = ByteBuffer.allocate(700).position(7).slice().put(50, text).position(5);
      heap.limit(660);
      ByteBuffer direct = ByteBuffer.allocateDirect(700).put(50, text).limit(650).position(649);
      ByteBuffer readOnly = ByteBuffer.allocate(700).put(50, text).asReadOnlyBuffer();
      WriteBatch batch = new WriteBatch(16);
      // run 1: three pieces adjacent in the heap slice (sealed straight from its array)
      batch.add(0, heap, 50, 100);
      batch.add(100, heap, 150, 200);
      batch.add(300, heap, 350, 300);
      // run 2: two pieces adjacent in a direct buffer
      batch.add(2048, direct, 50, 250);
      batch.add(2298, direct, 300, 350);
      // run 3: one piece of a read-only buffer
      batch.add(4096, readOnly, 60, 500);
      // run 4: contiguous remotely, but apart in their buffer (gathered): 50..150 then 250..350
      batch.add(8192, heap, 50, 100);
      batch.add(8292, heap, 250, 100);
      // run 5: contiguous remotely, adjacent ranges of two different buffers (gathered)
      batch.add(12288, heap, 50, 100);
      batch.add(12388, direct, 150, 100);
      long position = g.tryWriteBatch(batch);
      assertEquals(c.postedPosition(), position);
      ChannelRig.await(() -> rig.acmeRecords.size() == 5, "five records opened");
      assertArrayEquals(text, rig.acmeRecords.get(0), "run 1");
      assertArrayEquals(text, rig.acmeRecords.get(1), "run 2");
      assertArrayEquals(Arrays.copyOfRange(text, 10, 510), rig.acmeRecords.get(2), "run 3");
      byte[] apart = ByteBuffer.allocate(200).put(text, 0, 100).put(text, 200, 100).array();
      assertArrayEquals(apart, rig.acmeRecords.get(3), "run 4");
      byte[] two = ByteBuffer.allocate(200).put(text, 0, 100).put(text, 100, 100).array();
      assertArrayEquals(two, rig.acmeRecords.get(4), "run 5");
      assertEquals(5, heap.position());
      assertEquals(660, heap.limit());
      assertEquals(649, direct.position());
      assertEquals(650, direct.limit());
      assertEquals(0, readOnly.position());
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void tryWriteSealsARangeOfAHeapDirectOrReadOnlyBufferStraightAndLeavesItAsItWas()
      throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
      byte[] text = bytes(300, 11);
      ByteBuffer heap = ByteBuffer.allocate(400).position(9).slice().put(20, text).position(3);
      ByteBuffer readOnly = ByteBuffer.allocate(400).put(20, text).asReadOnlyBuffer().limit(330);
      ByteBuffer direct = ByteBuffer.allocateDirect(400).put(20, text).position(399).limit(350);
      ByteBuffer[] sources = {heap, readOnly, direct};
      for (int i = 0; i < sources.length; i++) {
        ByteBuffer src = sources[i];
        int position = src.position();
        int limit = src.limit();
        long p = g.tryWrite(i * 1024L, src, 20, text.length);
        assertTrue(p > 0, WriteResult.name(p));
        assertEquals(position, src.position(), "position not moved: " + src);
        assertEquals(limit, src.limit(), "limit not moved: " + src);
      }
      ChannelRig.await(() -> rig.acmeRecords.size() == 3, "three records opened");
      for (int i = 0; i < sources.length; i++) {
        assertArrayEquals(text, rig.acmeRecords.get(i), sources[i].toString());
      }
    }
  }

  @Test
  void tryWriteSaysBackPressuredWhileEverySlotIsInFlightAndPostsOnceOneFrees() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c =
          rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-1").stagingSlots(1)));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
      ByteBuffer data = ByteBuffer.wrap(bytes(64, 5));
      boolean pressed = false;
      // every record gets its own range: none is overwritten before the host opened it
      long at = 0;
      for (int i = 0; i < 200 && !pressed; i++, at += 256) {
        long first = g.tryWrite(at, data, 0, 64);
        while (first == WriteResult.BACK_PRESSURED) {
          c.pollCompletions();
          first = g.tryWrite(at, data, 0, 64);
        }
        assertTrue(first > 0, WriteResult.name(first));
        long second = g.tryWrite(at + 128, data, 0, 64);
        pressed = second == WriteResult.BACK_PRESSURED;
        assertTrue(pressed || second > 0, WriteResult.name(second));
        long done = first;
        ChannelRig.await(() -> c.completedPosition() >= done, "write completed");
      }
      assertTrue(pressed, "the one slot was never found busy");
      long after = g.tryWrite(at + 128, data, 0, 64);
      assertTrue(after > 0, "a freed slot takes the next write: " + WriteResult.name(after));
      assertEquals(null, c.dataPathFailure());
    }
  }

  /**
   * Selective signaling: a burst's last writes ask for no completion, and nothing follows them; the
   * fence the completion lane posts must still complete every one of them, with no write after.
   */
  @Test
  void everyWriteOfABurstCompletesWithoutAnotherWriteAfterIt() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(1));
      ByteBuffer data = ByteBuffer.wrap(bytes(64, 7));
      int bursts = 0;
      int records = 0;
      do {
        for (int i = 0; i < 32; i++, records++) {
          long at = (records % 256) * 256L; // each record its own range, reused after the host
          long p;
          while ((p = g.tryWrite(at, data, 0, 64)) == WriteResult.BACK_PRESSURED) {
            Thread.onSpinWait(); // the lane's thread frees slots; this thread only writes
          }
          assertTrue(p > 0, WriteResult.name(p));
        }
        long posted = c.postedPosition();
        ChannelRig.await(() -> c.completedPosition() == posted, "the burst's last write completed");
        int opened = records;
        ChannelRig.await(() -> rig.acmeRecords.size() == opened, "every record opened");
        bursts++;
      } while (c.fencesPosted() == 0 && bursts < 20);
      assertTrue(c.fencesPosted() > 0, "no burst ended unsignaled in " + bursts);
      assertEquals(null, c.dataPathFailure());
      assertEquals(records, rig.host.stats().recordsOpened(), "a fence opens nothing at the host");
      assertTrue(c.isOpen());
    }
  }

  @Test
  void tryWriteNamesEveryRefusalWithoutPosting() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      ByteBuffer data = ByteBuffer.wrap(bytes(64, 5));
      long before = c.postedPosition();
      assertEquals(WriteResult.OUT_OF_BOUNDS, g.tryWrite(4096 - 64, data, 0, 64));
      assertEquals(WriteResult.OUT_OF_BOUNDS, g.tryWrite(-1, data, 0, 8));
      assertEquals(WriteResult.OUT_OF_BOUNDS, g.tryWrite(Long.MAX_VALUE, data, 0, 8));
      assertEquals(WriteResult.INVALID_ARGUMENT, g.tryWrite(0, data, 0, 0));
      assertEquals(WriteResult.INVALID_ARGUMENT, g.tryWrite(0, data, 60, 8));
      ByteBuffer limited = ByteBuffer.allocateDirect(64).limit(32); // capacity 64, limit 32
      assertEquals(WriteResult.INVALID_ARGUMENT, g.tryWrite(0, limited, 30, 8), "past the limit");
      WriteBatch pastLimit = new WriteBatch(2);
      pastLimit.add(0, limited, 16, 8);
      pastLimit.add(8, limited, 28, 8);
      assertEquals(WriteResult.INVALID_ARGUMENT, g.tryWriteBatch(pastLimit), "batch past limit");
      RemoteGrant readOnly =
          rig.client("acme", "dashboard")
              .grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofMinutes(1));
      assertEquals(WriteResult.NOT_PERMITTED, readOnly.tryWrite(0, data, 0, 8));

      assertTrue(rig.host.revoke(g.id(), "operator"));
      ChannelRig.await(() -> "REVOKED".equals(g.endedBecause()), "revocation pushed");
      assertEquals(WriteResult.REVOKED, g.tryWrite(0, data, 0, 8));

      RemoteGrant brief =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 8192, 4096, Duration.ofMillis(300));
      ChannelRig.await(() -> !brief.isValid(), "grant expired");
      assertEquals(WriteResult.EXPIRED, brief.tryWrite(0, data, 0, 8));
      assertEquals(before, c.postedPosition(), "nothing posted");

      RemoteGrant live =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 16384, 4096, Duration.ofMinutes(1));
      c.close();
      assertEquals(WriteResult.SESSION_CLOSED, live.tryWrite(0, data, 0, 8));
      assertEquals(0, rig.acmeRecords.size());
    }
  }

  @Test
  void clientsOfAProcessShareOneDeviceContextUntilTheLastCloses() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      // device options of their own, so no other test's clients share this context
      DeviceOptions device = new DeviceOptions().transportTimeout(Duration.ofMillis(3_917));
      assertFalse(AttackProbe.deviceContextOpen(ChannelRig.PROVIDER, device));
      SecureRdmaClient one =
          SecureRdmaClient.connect(rig.options("acme", "trainer-1").device(device));
      SecureRdmaClient two =
          SecureRdmaClient.connect(rig.options("acme", "trainer-2").device(device));
      try {
        assertEquals(2, AttackProbe.deviceContextUsers(one));
        assertEquals(2, AttackProbe.deviceContextUsers(two));
        RemoteGrant g2 =
            two.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
        one.close();
        assertEquals(1, AttackProbe.deviceContextUsers(two));
        assertTrue(AttackProbe.deviceContextOpen(ChannelRig.PROVIDER, device));
        byte[] after = bytes(100, 6);
        g2.writeBlocking(0, ByteBuffer.wrap(after));
        ChannelRig.await(() -> rig.acmeRecords.size() == 1, "the other client still writes");
        assertArrayEquals(after, rig.acmeRecords.get(0));
      } finally {
        one.close();
        two.close();
      }
      assertFalse(
          AttackProbe.deviceContextOpen(ChannelRig.PROVIDER, device), "last close frees it");
    }
  }
}
