package io.srdma.verbs;

import static io.srdma.verbs.VerbsTestRig.assertAll;
import static io.srdma.verbs.VerbsTestRig.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Type-2 memory windows: bound by the owner on the QP that serves one peer, usable only through
 * that QP, only inside the window, only with its rights, and dead after LOCAL_INV.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MemoryWindowContractTest {
  private static final int OWNER_MR = AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND;

  /** Binds a window over {@code [offset, offset+len)} of {@code mr} on B's QP; returns its rkey. */
  private static int bind(
      VerbsTestRig rig,
      QueuePair qp,
      MemoryWindow mw,
      MemoryRegion mr,
      long offset,
      long len,
      int access) {
    SendWorkRequest wr =
        new SendWorkRequest(1).wrId(100).bind(mw, mr, mr.address() + offset, len, access);
    qp.postSend(wr);
    rig.expect(rig.cqB, WcStatus.SUCCESS, 100);
    return mw.rkey();
  }

  @Test
  void shouldWriteAndReadThroughABoundWindow() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 256, AccessFlags.LOCAL_WRITE);
      MemoryRegion owner = rig.register(rig.pdB, 4096, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      int rkey =
          bind(
              rig,
              rig.qpB,
              mw,
              owner,
              1024,
              256,
              AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
      assertNotEquals(owner.rkey(), rkey);
      fill(src, 6);
      rig.write(rig.qpA, 1, src, 0, 256, owner.address() + 1024, rkey);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 1);
      assertEquals(src.buffer(), owner.buffer().slice(1024, 256));
      MemoryRegion back = rig.register(rig.pdA, 256, AccessFlags.LOCAL_WRITE);
      rig.read(rig.qpA, 2, back, 0, 256, owner.address() + 1024, rkey);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 2);
      assertEquals(src.buffer(), back.buffer());
    }
  }

  @Test
  void shouldRefuseAWriteOutsideTheWindowButInsideTheRegion() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeTrue(
          rig.ctxB.queryDevice().windowBoundsEnforced(),
          "device does not enforce memory window bounds (rxe); grants are scoped by per-grant MRs there");
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion owner = rig.register(rig.pdB, 4096, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      int rkey = bind(rig, rig.qpB, mw, owner, 1024, 256, AccessFlags.REMOTE_WRITE);
      fill(src, 1);
      rig.write(rig.qpA, 1, src, 0, 8, owner.address() + 1024 + 256 - 7, rkey);
      rig.expect(rig.cqA, WcStatus.REM_ACCESS_ERR, 1);
      assertAll(owner, 0, 4096, (byte) 0);
    }
  }

  @Test
  void shouldRefuseAReadThroughAWriteOnlyWindow() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion local = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion owner = rig.register(rig.pdB, 4096, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      int rkey = bind(rig, rig.qpB, mw, owner, 0, 64, AccessFlags.REMOTE_WRITE);
      rig.read(rig.qpA, 1, local, 0, 8, owner.address(), rkey);
      rig.expect(rig.cqA, WcStatus.REM_ACCESS_ERR, 1);
    }
  }

  @Test
  void shouldRefuseAWindowUsedFromAnotherQueuePair() {
    try (VerbsTestRig rig = VerbsTestRig.open();
        CompletionQueue cqC = rig.ctxA.createCompletionQueue(64);
        CompletionQueue cqD = rig.ctxB.createCompletionQueue(64);
        QueuePair qpC = rig.pdA.createQueuePair(QueuePairAttributes.of(cqC, 16, 1));
        QueuePair qpD = rig.pdB.createQueuePair(QueuePairAttributes.of(cqD, 16, 1))) {
      int all = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
      VerbsTestRig.connect(qpC, all, qpD, all);
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion owner = rig.register(rig.pdB, 4096, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      int rkey = bind(rig, rig.qpB, mw, owner, 0, 4096, AccessFlags.REMOTE_WRITE);
      fill(src, 2);
      // Same PD, same rkey, but the request arrives on QP D, not on the QP the window is bound to.
      rig.write(qpC, 1, src, 0, 8, owner.address(), rkey);
      rig.expect(cqC, WcStatus.REM_ACCESS_ERR, 1);
      assertAll(owner, 0, 4096, (byte) 0);
      assertEquals(QpState.RTS, rig.qpA.state(), "the other connection is not disturbed");
      rig.write(rig.qpA, 2, src, 0, 8, owner.address(), rkey);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 2);
    }
  }

  @Test
  void shouldRefuseAWindowAfterLocalInvalidate() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion owner = rig.register(rig.pdB, 4096, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      int rkey = bind(rig, rig.qpB, mw, owner, 0, 64, AccessFlags.REMOTE_WRITE);
      rig.write(rig.qpA, 1, src, 0, 8, owner.address(), rkey);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 1);
      rig.qpB.postSend(new SendWorkRequest(1).wrId(7).localInvalidate(rkey));
      rig.expect(rig.cqB, WcStatus.SUCCESS, 7);
      fill(src, 3);
      rig.write(rig.qpA, 2, src, 0, 8, owner.address(), rkey);
      rig.expect(rig.cqA, WcStatus.REM_ACCESS_ERR, 2);
      assertAll(owner, 0, 64, (byte) 0);
    }
  }

  @Test
  void shouldGiveEachBindAFreshRkeyAndKillThePreviousOne() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion owner = rig.register(rig.pdB, 4096, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      int first = bind(rig, rig.qpB, mw, owner, 0, 64, AccessFlags.REMOTE_WRITE);
      rig.qpB.postSend(new SendWorkRequest(1).wrId(7).localInvalidate(first));
      rig.expect(rig.cqB, WcStatus.SUCCESS, 7);
      int second = bind(rig, rig.qpB, mw, owner, 64, 64, AccessFlags.REMOTE_WRITE);
      assertNotEquals(first, second);
      rig.write(rig.qpA, 1, src, 0, 8, owner.address() + 64, second);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 1);
      rig.write(rig.qpA, 2, src, 0, 8, owner.address(), first);
      rig.expect(rig.cqA, WcStatus.REM_ACCESS_ERR, 2);
    }
  }

  @Test
  void shouldFailABindOnARegionWithoutMwBind() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion plain = rig.register(rig.pdB, 4096, AccessFlags.LOCAL_WRITE);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      rig.qpB.postSend(
          new SendWorkRequest(1)
              .wrId(100)
              .bind(mw, plain, plain.address(), 64, AccessFlags.REMOTE_WRITE));
      rig.expect(rig.cqB, WcStatus.MW_BIND_ERR, 100);
      VerbsTestRig.awaitState(rig.qpB, QpState.ERROR);
    }
  }

  @Test
  void shouldFailABindPastTheEndOfTheRegion() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion owner = rig.register(rig.pdB, 4096, OWNER_MR);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      rig.qpB.postSend(
          new SendWorkRequest(1)
              .wrId(100)
              .bind(mw, owner, owner.address() + 4000, 97, AccessFlags.REMOTE_WRITE));
      rig.expect(rig.cqB, WcStatus.MW_BIND_ERR, 100);
    }
  }

  @Test
  void shouldFailALocalInvalidateOfAnUnknownRkey() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      rig.qpB.postSend(new SendWorkRequest(1).wrId(8).localInvalidate(0x12345678));
      rig.expect(rig.cqB, WcStatus.LOC_QP_OP_ERR, 8);
    }
  }
}
