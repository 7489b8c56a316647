package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteResult;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write checked while its grant was live but posted after the application heard of the grant's
 * revocation: the host invalidated the window, so the write could only fail at the target and put
 * the queue pair — the session and every other grant on it — into ERROR. The writer rechecks the
 * grant under its lock. The ordering is forced, not raced: the test holds the writer's lock while a
 * writer thread passes the grant check and queues for it, revokes, waits for {@code onRevoked},
 * then lets the writer go.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteAfterRevokeNoticeTest {
  private static final Duration TTL = Duration.ofMinutes(1);
  @TempDir Path dir;

  /** The client writer's lock (internal; reached by reflection so the test can order threads). */
  private static ReentrantLock writerLock(SecureRdmaClient c) throws ReflectiveOperationException {
    Field w = SecureRdmaClient.class.getDeclaredField("writer");
    w.setAccessible(true);
    Object writer = w.get(c);
    Field l = writer.getClass().getDeclaredField("lock");
    l.setAccessible(true);
    return (ReentrantLock) l.get(writer);
  }

  /**
   * Runs {@code write} on a thread while this one holds the writer's lock, revokes {@code g} once
   * the thread queues for the lock, waits for the revocation callback, then releases the lock.
   */
  private static <T> T writeAcrossRevoke(
      ChannelRig rig,
      SecureRdmaClient c,
      RemoteGrant g,
      CountDownLatch revoked,
      java.util.concurrent.Callable<T> write)
      throws Exception {
    ReentrantLock lock = writerLock(c);
    AtomicReference<T> result = new AtomicReference<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread writer =
        new Thread(
            () -> {
              try {
                result.set(write.call());
              } catch (Throwable e) {
                failure.set(e);
              }
            },
            "write-across-revoke");
    lock.lock();
    try {
      writer.start();
      ChannelRig.await(() -> lock.hasQueuedThread(writer), "the write waits for the lock");
      assertTrue(g.isValid(), "the write passed the grant check before the revoke");
      assertTrue(rig.host.revoke(g.id(), "test-operator"));
      assertTrue(revoked.await(10, TimeUnit.SECONDS), "onRevoked fired");
    } finally {
      lock.unlock();
    }
    writer.join(TimeUnit.SECONDS.toMillis(10));
    assertFalse(writer.isAlive(), "the write returned");
    if (failure.get() != null) {
      throw new AssertionError("the write threw", failure.get());
    }
    return result.get();
  }

  private static CountDownLatch revocationOf(SecureRdmaClient c, RemoteGrant g) {
    CountDownLatch revoked = new CountDownLatch(1);
    c.onRevoked(
        (ended, why) -> {
          if (ended.id() == g.id()) {
            revoked.countDown();
          }
        });
    return revoked;
  }

  @Test
  void aWriteWaitingForTheLockWhileItsGrantIsRevokedFailsRevokedAndTheSessionLives()
      throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant stays = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, TTL);
      RemoteGrant revokedGrant = c.grant("kvcache", EnumSet.of(Access.WRITE), 8192, 4096, TTL);
      ByteBuffer data = ByteBuffer.allocateDirect(64);
      stays.writeBlocking(0, data.duplicate());
      revokedGrant.writeBlocking(0, data.duplicate());
      CountDownLatch revoked = revocationOf(c, revokedGrant);

      long r =
          writeAcrossRevoke(
              rig, c, revokedGrant, revoked, () -> revokedGrant.tryWrite(0, data, 0, 64));

      assertEquals(WriteResult.REVOKED, r, "tryWrite: " + WriteResult.name(r));
      stays.writeBlocking(0, data.duplicate());
      assertTrue(c.isOpen(), "the session and its other grant survive");
      assertTrue(stays.isValid());
    }
  }

  @Test
  void aStagedWriteWaitingForTheLockWhileItsGrantIsRevokedFailsRevokedAndTheSessionLives()
      throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant stays = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, TTL);
      RemoteGrant revokedGrant = c.grant("kvcache", EnumSet.of(Access.WRITE), 8192, 4096, TTL);
      ByteBuffer data = ByteBuffer.allocate(64);
      stays.writeBlocking(0, data.duplicate());
      CountDownLatch revoked = revocationOf(c, revokedGrant);

      CompletableFuture<Void> stage =
          writeAcrossRevoke(
              rig,
              c,
              revokedGrant,
              revoked,
              () -> revokedGrant.write(0, data.duplicate()).toCompletableFuture());

      ExecutionException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class, () -> stage.get(10, TimeUnit.SECONDS));
      ChannelException why = (ChannelException) e.getCause();
      assertEquals(ChannelException.Reason.REVOKED, why.reason(), why.getMessage());
      stays.writeBlocking(0, data.duplicate());
      assertTrue(c.isOpen(), "the session and its other grant survive");
    }
  }
}
