package io.srdma.verbs.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The copy happens under the lock that deregistration and invalidation take: with that lock held by
 * the test, a WRITE whose access check already passed waits at the copy; the test revokes the key
 * while holding the lock, and then not one byte lands.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoopbackRevocationLockTest {
  private static final int SIZE = 4096;

  @Test
  void shouldPlaceNoByteOfAWriteWaitingAtTheCopyOnceTheRegionIsDeregistered() throws Exception {
    try (LoopbackPair p = LoopbackPair.connected()) {
      MemoryRegion src = p.register(p.pdA, SIZE, AccessFlags.LOCAL_WRITE);
      VerbsTestRig.fill(src, 5);
      LoopbackMemoryRegion dst =
          (LoopbackMemoryRegion)
              p.pdB.registerMemory(
                  java.nio.ByteBuffer.allocateDirect(SIZE),
                  AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      Thread poster;
      synchronized (dst.accessLock()) {
        poster = postOnAnotherThread(p, src, dst.address(), dst.rkey());
        awaitBlocked(poster);
        dst.close(); // takes the same (reentrant) lock: revoked before the poster may copy
      }
      poster.join(TimeUnit.SECONDS.toMillis(10));
      assertEquals(WcStatus.REM_ACCESS_ERR, one(p).status());
      VerbsTestRig.assertAll(dst, 0, SIZE, (byte) 0);
    }
  }

  @Test
  void shouldPlaceNoByteOfAWriteWaitingAtTheCopyOnceTheWindowIsInvalidated() throws Exception {
    try (LoopbackPair p = LoopbackPair.connected()) {
      MemoryRegion src = p.register(p.pdA, SIZE, AccessFlags.LOCAL_WRITE);
      VerbsTestRig.fill(src, 7);
      MemoryRegion owner = p.register(p.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
      LoopbackMemoryWindow mw = (LoopbackMemoryWindow) p.track(p.pdB.allocateMemoryWindow());
      p.qpB.postSend(
          new SendWorkRequest(1)
              .wrId(1)
              .bind(mw, owner, owner.address(), SIZE, AccessFlags.REMOTE_WRITE));
      WorkCompletion[] out = {new WorkCompletion()};
      assertEquals(1, p.cqB.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.SUCCESS, out[0].status());
      int rkey = mw.rkey();
      Thread poster;
      synchronized (mw.accessLock()) {
        poster = postOnAnotherThread(p, src, owner.address(), rkey);
        awaitBlocked(poster);
        p.qpB.postSend(new SendWorkRequest(1).wrId(2).localInvalidate(rkey));
      }
      assertEquals(1, p.cqB.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.SUCCESS, out[0].status(), "LOCAL_INV");
      poster.join(TimeUnit.SECONDS.toMillis(10));
      assertEquals(WcStatus.REM_ACCESS_ERR, one(p).status());
      VerbsTestRig.assertAll(owner, 0, SIZE, (byte) 0);
    }
  }

  private static Thread postOnAnotherThread(
      LoopbackPair p, MemoryRegion src, long address, int rkey) {
    SendWorkRequest wr =
        new SendWorkRequest(1).wrId(9).opcode(WrOpcode.RDMA_WRITE).remote(address, rkey);
    wr.sgl().set(src, 0, SIZE);
    Thread t = new Thread(() -> p.qpA.postSend(wr), "loopback-test-poster");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void awaitBlocked(Thread t) {
    long deadline = System.nanoTime() + VerbsTestRig.COMPLETION_WAIT.toNanos();
    while (t.getState() != Thread.State.BLOCKED) {
      assertTrue(System.nanoTime() < deadline, "the poster never reached the copy");
      assertTrue(t.isAlive(), "the poster finished without waiting for the access lock");
      LockSupport.parkNanos(100_000);
    }
  }

  private static WorkCompletion one(LoopbackPair p) {
    WorkCompletion[] out = {new WorkCompletion()};
    assertEquals(1, p.cqA.await(out, VerbsTestRig.COMPLETION_WAIT));
    assertEquals(9, out[0].wrId());
    return out[0];
  }
}
