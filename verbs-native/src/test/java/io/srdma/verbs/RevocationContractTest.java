package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Revocation stops a WRITE already in flight: the target invalidates the key (LOCAL_INV of a
 * window, or deregistration of a per-grant region) while a large WRITE is being placed; after the
 * invalidation completed no further byte of it lands, and the writer's WRITE fails with
 * REM_ACCESS_ERR (or succeeded, when it was placed entirely before the invalidation).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RevocationContractTest {
  private static final int SIZE = 8 << 20;
  private static final int ATTEMPTS = 3;
  private static final int OWNER_MR = AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND;

  /** What one attempt saw. */
  private record Outcome(WcStatus status, boolean midWay) {}

  @Test
  void shouldPlaceNoByteAfterAWindowIsInvalidatedUnderAnInFlightWrite() throws Exception {
    int midWay = 0;
    for (int i = 0; i < ATTEMPTS; i++) {
      if (attempt(true).midWay()) {
        midWay++;
      }
    }
    System.out.printf(
        "[%s] window: %d of %d invalidations hit a WRITE mid-way%n",
        TestProviders.name(), midWay, ATTEMPTS);
  }

  @Test
  void shouldPlaceNoByteAfterARegionIsDeregisteredUnderAnInFlightWrite() throws Exception {
    int midWay = 0;
    for (int i = 0; i < ATTEMPTS; i++) {
      if (attempt(false).midWay()) {
        midWay++;
      }
    }
    System.out.printf(
        "[%s] region: %d of %d deregistrations hit a WRITE mid-way%n",
        TestProviders.name(), midWay, ATTEMPTS);
  }

  /**
   * One WRITE of {@link #SIZE} bytes from A to B, posted on another thread; as soon as its first
   * byte landed, B invalidates the key; the region must not change after that.
   */
  private static Outcome attempt(boolean window) throws Exception {
    ExecutorService poster =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "revocation-test-poster"));
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, SIZE, AccessFlags.LOCAL_WRITE);
      ByteBuffer s = src.buffer();
      for (int i = 0; i < SIZE; i++) {
        s.put(i, (byte) (i % 251 + 1));
      }
      ByteBuffer memory = ByteBuffer.allocateDirect(SIZE);
      MemoryRegion target;
      MemoryWindow mw = null;
      int rkey;
      if (window) {
        target = rig.register(rig.pdB, SIZE, OWNER_MR);
        memory = target.buffer();
        mw = rig.track(rig.pdB.allocateMemoryWindow());
        rig.qpB.postSend(
            new SendWorkRequest(1)
                .wrId(100)
                .bind(mw, target, target.address(), SIZE, AccessFlags.REMOTE_WRITE));
        rig.expect(rig.cqB, WcStatus.SUCCESS, 100);
        rkey = mw.rkey();
      } else {
        target =
            rig.track(
                rig.pdB.registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE));
        rkey = target.rkey();
      }
      long address = target.address();
      Future<?> posted = poster.submit(() -> rig.write(rig.qpA, 1, src, 0, SIZE, address, rkey));
      awaitFirstByte(memory);
      if (window) {
        rig.qpB.postSend(new SendWorkRequest(1).wrId(101).localInvalidate(rkey));
        rig.expect(rig.cqB, WcStatus.SUCCESS, 101);
      } else {
        target.close();
      }
      byte[] atInvalidation = new byte[SIZE];
      memory.duplicate().clear().get(atInvalidation);
      posted.get(30, TimeUnit.SECONDS);
      WorkCompletion wc = rig.expectAny(rig.cqA, 1, WcStatus.SUCCESS, WcStatus.REM_ACCESS_ERR);
      byte[] after = new byte[SIZE];
      memory.duplicate().clear().get(after);
      int firstChange = Arrays.mismatch(atInvalidation, after);
      if (firstChange >= 0) {
        fail(
            TestProviders.name()
                + ": byte "
                + firstChange
                + " was placed after the invalidation completed ("
                + wc.status()
                + ")");
      }
      boolean complete = after[SIZE - 1] != 0;
      if (wc.status() == WcStatus.REM_ACCESS_ERR) {
        assertTrue(!complete, "a failed WRITE was placed entirely");
      } else {
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertTrue(complete, "a successful WRITE left its tail unplaced");
      }
      return new Outcome(wc.status(), !complete);
    } finally {
      poster.shutdownNow();
      assertTrue(poster.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  private static void awaitFirstByte(ByteBuffer memory) {
    long deadline = System.nanoTime() + VerbsTestRig.COMPLETION_WAIT.toNanos();
    while (memory.get(0) == 0) {
      assertTrue(System.nanoTime() < deadline, "the WRITE never started to land");
      LockSupport.parkNanos(20_000);
    }
  }
}
