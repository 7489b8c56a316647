package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import io.srdma.channel.WriteResult;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tenant SDK's data path fed hostile or buggy application input: a buffer another thread
 * changes during a write, overlapping batch pieces, an unbounded TTL, a read racing close. Each
 * must end in a typed refusal with nothing half-applied, nothing written outside the grant and the
 * session intact. Interleavings are forced by holding the client's internal locks (reached by
 * reflection), not raced.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileApplicationInputTest {
  private static final Duration TTL = Duration.ofMinutes(1);
  @TempDir Path dir;

  private static Object field(Object owner, Class<?> type, String name)
      throws ReflectiveOperationException {
    Field f = type.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(owner);
  }

  /** The client writer's lock. */
  private static ReentrantLock writerLock(SecureRdmaClient c) throws ReflectiveOperationException {
    Object writer = field(c, SecureRdmaClient.class, "writer");
    return (ReentrantLock) field(writer, writer.getClass(), "lock");
  }

  /** The client reader's lock (held by a read while it uses the registered read buffer). */
  private static ReentrantLock readLock(SecureRdmaClient c) throws ReflectiveOperationException {
    Object reader = field(c, SecureRdmaClient.class, "reader");
    return (ReentrantLock) field(reader, reader.getClass(), "readLock");
  }

  /**
   * Runs {@code call} on a thread while this one holds {@code lock}; once the thread queues for it,
   * runs {@code meanwhile}, then lets it go and returns what the call returned.
   */
  private static <T> T acrossLock(ReentrantLock lock, Callable<T> call, Runnable meanwhile)
      throws Exception {
    AtomicReference<T> result = new AtomicReference<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try {
                result.set(call.call());
              } catch (Throwable e) {
                failure.set(e);
              }
            },
            "across-lock");
    lock.lock();
    try {
      t.start();
      ChannelRig.await(() -> lock.hasQueuedThread(t), "the call waits for the lock");
      meanwhile.run();
    } finally {
      lock.unlock();
    }
    t.join(TimeUnit.SECONDS.toMillis(20));
    assertTrue(!t.isAlive(), "the call returned");
    if (failure.get() != null) {
      throw new AssertionError("the call threw", failure.get());
    }
    return result.get();
  }

  @Test
  void aConvenienceWriteWhoseBufferGrowsWhileItWaitsWritesOnlyWhatWasCheckedInsideTheGrant()
      throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, TTL);
      byte[] all = ChannelRig.bytes(2048, 7).array();
      ByteBuffer data = ByteBuffer.wrap(all).limit(100);
      long rel = 4096 - 136; // 100 bytes + 36 of overhead end exactly at the grant's end

      CompletableFuture<Void> stage =
          acrossLock(
              writerLock(c),
              () -> g.write(rel, data).toCompletableFuture(),
              () -> data.limit(2048)); // a record of 2048 bytes there would end far past the grant

      stage.get(10, TimeUnit.SECONDS);
      ChannelRig.await(() -> rig.acmeRecords.size() == 1, "the record opened");
      assertArrayEquals(Arrays.copyOf(all, 100), rig.acmeRecords.get(0), "the bytes checked");
      assertNull(c.dataPathFailure(), "nothing reached past the grant");
      g.writeBlocking(0, ByteBuffer.wrap(all, 0, 10));
      ChannelRig.await(() -> rig.acmeRecords.size() == 2, "the next write opened");

      ByteBuffer shrinking = ByteBuffer.wrap(all).limit(1000);
      long before = c.postedPosition();
      CompletableFuture<Void> refused =
          acrossLock(
              writerLock(c),
              () -> g.write(0, shrinking).toCompletableFuture(),
              () -> shrinking.limit(10));
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> refused.get(10, TimeUnit.SECONDS));
      ChannelException why = (ChannelException) e.getCause();
      assertEquals(ChannelException.Reason.INVALID_ARGUMENT, why.reason(), why.getMessage());
      assertEquals(before, c.postedPosition(), "nothing posted");
      g.writeBlocking(0, ByteBuffer.wrap(all, 0, 10));
      assertTrue(c.isOpen(), "the session lives");
    }
  }

  @Test
  void aTryWriteWhoseBufferShrinksWhileItWaitsSaysInvalidArgumentAndPostsNothing()
      throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, TTL);
      ByteBuffer heap = ByteBuffer.allocate(256);
      ByteBuffer direct = ByteBuffer.allocateDirect(256);
      long before = c.postedPosition();

      Long one = acrossLock(writerLock(c), () -> g.tryWrite(0, heap, 0, 200), () -> heap.limit(8));
      assertEquals(WriteResult.INVALID_ARGUMENT, one, WriteResult.name(one));
      WriteBatch batch = new WriteBatch(2);
      batch.add(0, direct, 0, 100);
      batch.add(100, heap, 0, 8); // gathered: two buffers in one run
      heap.limit(256);
      Long two = acrossLock(writerLock(c), () -> g.tryWriteBatch(batch), () -> direct.limit(8));
      assertEquals(WriteResult.INVALID_ARGUMENT, two, WriteResult.name(two));
      assertEquals(before, c.postedPosition(), "nothing posted");

      long p = g.tryWrite(0, heap, 0, 16);
      assertTrue(p > 0, WriteResult.name(p));
      ChannelRig.await(() -> rig.acmeRecords.size() == 1, "the next write opened");
      assertTrue(c.isOpen());
    }
  }

  @Test
  void aBatchWhosePiecesOverlapAnyEarlierRecordIsRefusedWholeAndPostsNothing() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, TTL);
      ByteBuffer a = ChannelRig.bytes(10, 1);
      ByteBuffer b = ChannelRig.bytes(10, 2);
      long before = c.postedPosition();
      long[][] overlapping = {
        {0, 0}, // the same offset twice
        {100, 80}, // the second record [80, 126) runs into the first [100, 146)
        {0, 1000, 5}, // the third overlaps the first, not the one before it
        {1000, 2000, 0, 1010}, // a ring wrapping once: its second part runs into its first
        {1000, 2000, 100, 1990}, // the same, into the first part's last record
      };
      for (long[] offsets : overlapping) {
        WriteBatch batch = new WriteBatch(4);
        for (int i = 0; i < offsets.length; i++) {
          batch.add(offsets[i], i % 2 == 0 ? a : b, 0, 10);
        }
        long r = g.tryWriteBatch(batch);
        assertEquals(
            WriteResult.INVALID_ARGUMENT, r, Arrays.toString(offsets) + ": " + WriteResult.name(r));
      }
      assertEquals(before, c.postedPosition(), "nothing posted");

      WriteBatch apart = new WriteBatch(4); // descending but apart: fine
      apart.add(1000, a, 0, 10);
      apart.add(500, b, 0, 10);
      apart.add(0, a, 0, 10);
      long p = g.tryWriteBatch(apart);
      assertTrue(p > 0, WriteResult.name(p));
      ChannelRig.await(() -> rig.acmeRecords.size() == 3, "three records opened");
      long[][] wrappedApart = {
        {3000, 4000, 2000, 2500}, // a ring wrapping once, its second part below its first
        {3000, 5000, 4000, 4500}, // wrapping into the gap between the first part's records
      };
      int opened = 3;
      for (long[] offsets : wrappedApart) {
        WriteBatch batch = new WriteBatch(4);
        for (int i = 0; i < offsets.length; i++) {
          batch.add(offsets[i] + 8192L * (opened / 4), i % 2 == 0 ? a : b, 0, 10);
        }
        long w = g.tryWriteBatch(batch);
        assertTrue(w > 0, Arrays.toString(offsets) + ": " + WriteResult.name(w));
        opened += offsets.length;
        int want = opened;
        ChannelRig.await(() -> rig.acmeRecords.size() == want, "wrapped batch opened");
      }
      assertEquals(0, rig.host.stats().recordsRejected());
    }
  }

  @Test
  void aGrantAskedForWithAnUnboundedTtlIsClippedToTheRolesMaximum() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, ChronoUnit.FOREVER.getDuration());
      assertTrue(g.isValid());
      assertTrue(
          g.expiresAt().isBefore(java.time.Instant.now().plus(Duration.ofMinutes(11))),
          "clipped to the trainer role's max-ttl of 10 minutes: " + g.expiresAt());
    }
  }

  @Test
  void aReadThatRacesCloseFailsSessionClosed() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      rig.acmeKv.seal(0, ByteBuffer.wrap(new byte[64]));
      SecureRdmaClient c = rig.client("acme", "dashboard");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, TTL);
      assertEquals(64, g.readBlocking(0, 64 + 108).remaining());

      CompletableFuture<java.nio.ByteBuffer> read =
          acrossLock(readLock(c), () -> g.read(0, 64 + 108).toCompletableFuture(), c::close);

      ExecutionException e =
          assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
      ChannelException why = (ChannelException) e.getCause();
      assertEquals(ChannelException.Reason.SESSION_CLOSED, why.reason(), why.getMessage());
    }
  }
}
