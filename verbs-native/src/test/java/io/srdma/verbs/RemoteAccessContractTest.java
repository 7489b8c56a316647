package io.srdma.verbs;

import static io.srdma.verbs.VerbsTestRig.assertAll;
import static io.srdma.verbs.VerbsTestRig.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The responder's access checks: every refused access completes with REM_ACCESS_ERR, both QPs go to
 * ERROR, later requests flush, and not one byte outside the region changes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteAccessContractTest {
  private static final int RW =
      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

  /** Posts a WRITE that must be refused plus one behind it, and checks the aftermath. */
  private static void assertWriteRefused(
      VerbsTestRig rig, MemoryRegion src, long addr, int len, int rkey) {
    assertWriteRefused(rig, src, addr, len, rkey, WcStatus.REM_ACCESS_ERR);
  }

  private static void assertWriteRefused(
      VerbsTestRig rig, MemoryRegion src, long addr, int len, int rkey, WcStatus... allowed) {
    rig.write(rig.qpA, 1, src, 0, len, addr, rkey);
    rig.write(rig.qpA, 2, src, 0, 1, addr, rkey);
    rig.expectAny(rig.cqA, 1, allowed);
    rig.expect(rig.cqA, WcStatus.WR_FLUSH_ERR, 2);
    VerbsTestRig.awaitState(rig.qpA, QpState.ERROR);
    VerbsTestRig.awaitState(rig.qpB, QpState.ERROR);
  }

  @Test
  void shouldRefuseAWriteOneBytePastTheEnd() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 8192, AccessFlags.LOCAL_WRITE);
      fill(src, 1);
      // The target region is the middle of a larger buffer: the bytes around it must stay zero.
      java.nio.ByteBuffer whole = java.nio.ByteBuffer.allocateDirect(3 * 4096);
      MemoryRegion dst = rig.track(rig.pdB.registerMemory(whole.slice(4096, 4096), RW));
      assertWriteRefused(rig, src, dst.address() + 1, 4096, dst.rkey());
      assertAll(dst, 0, 4096, (byte) 0);
      for (int i = 0; i < whole.capacity(); i++) {
        assertEquals(0, whole.get(i), "byte " + i + " of the surrounding buffer");
      }
    }
  }

  @Test
  void shouldAcceptAWriteEndingExactlyAtTheEnd() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 4096, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 4096, RW);
      fill(src, 2);
      rig.write(rig.qpA, 1, src, 0, 4095, dst.address() + 1, dst.rkey());
      rig.expect(rig.cqA, WcStatus.SUCCESS, 1);
    }
  }

  @Test
  void shouldRefuseAWriteBeforeTheStart() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 4096, RW);
      assertWriteRefused(rig, src, dst.address() - 1, 8, dst.rkey());
      assertAll(dst, 0, 4096, (byte) 0);
    }
  }

  @Test
  void shouldRefuseAnOffsetPlusLengthThatOverflows() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 4096, RW);
      // addr + len wraps past 2^64 to a value inside the region
      assertWriteRefused(rig, src, -16L, 64, dst.rkey());
      assertAll(dst, 0, 4096, (byte) 0);
    }
  }

  @Test
  void shouldRefuseAGuessedRkey() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 4096, RW);
      assertWriteRefused(rig, src, dst.address(), 8, dst.rkey() ^ 0x1);
      assertAll(dst, 0, 4096, (byte) 0);
    }
  }

  @Test
  void shouldRefuseTheRkeyOfARegionInAnotherProtectionDomain() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      ProtectionDomain other = rig.track(rig.ctxB.allocateProtectionDomain());
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion foreign = rig.register(other, 4096, RW);
      assertWriteRefused(rig, src, foreign.address(), 8, foreign.rkey());
      assertAll(foreign, 0, 4096, (byte) 0);
    }
  }

  @Test
  void shouldRefuseAReadOfAWriteOnlyRegion() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion local = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion writeOnly =
          rig.register(rig.pdB, 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      fill(writeOnly, 4);
      rig.read(rig.qpA, 1, local, 0, 8, writeOnly.address(), writeOnly.rkey());
      rig.expect(rig.cqA, WcStatus.REM_ACCESS_ERR, 1);
      assertAll(local, 0, 64, (byte) 0);
      VerbsTestRig.awaitState(rig.qpB, QpState.ERROR);
    }
  }

  @Test
  void shouldRefuseAWriteToAReadOnlyRegion() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion readOnly = rig.register(rig.pdB, 64, AccessFlags.REMOTE_READ);
      assertWriteRefused(rig, src, readOnly.address(), 8, readOnly.rkey());
      assertAll(readOnly, 0, 64, (byte) 0);
    }
  }

  @Test
  void shouldRefuseAWriteTheQueuePairDoesNotAllow() {
    try (VerbsTestRig rig = VerbsTestRig.open(AccessFlags.REMOTE_READ, AccessFlags.REMOTE_READ)) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, RW);
      // The IB spec NAKs an operation the QP does not enable as an invalid request (rxe does);
      // the soft provider reports it as an access error.
      assertWriteRefused(
          rig,
          src,
          dst.address(),
          8,
          dst.rkey(),
          WcStatus.REM_ACCESS_ERR,
          WcStatus.REM_INV_REQ_ERR);
      assertAll(dst, 0, 64, (byte) 0);
    }
  }

  /**
   * C9-88 spares a zero-length WRITE the R_Key check, not the QP's rights: a QP that does not
   * enable remote writes takes no WRITE_WITH_IMM, not even an empty one, so no immediate reaches
   * its application (rxe refuses it as an invalid request).
   */
  @Test
  void shouldRefuseAnEmptyWriteWithImmediateTheQueuePairDoesNotAllow() {
    try (VerbsTestRig rig = VerbsTestRig.open(AccessFlags.REMOTE_READ, AccessFlags.REMOTE_READ)) {
      rig.qpB.postReceive(new ReceiveWorkRequest(1).wrId(60));
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(61)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .immData(0x5eed)
              .remote(0, 0);
      wr.sgl().clear();
      rig.qpA.postSend(wr);
      rig.expectAny(rig.cqA, 61, WcStatus.REM_ACCESS_ERR, WcStatus.REM_INV_REQ_ERR);
      // the target's receive is flushed (soft, loopback: the responder's QP fails too) or stays
      // posted; either way it never completes with the immediate
      WorkCompletion[] atB = {new WorkCompletion()};
      if (rig.cqB.await(atB, Duration.ofMillis(500)) == 1) {
        assertEquals(60, atB[0].wrId(), atB[0]::toString);
        assertNotEquals(WcStatus.SUCCESS, atB[0].status(), "the immediate reached the target");
      }
    }
  }

  @Test
  void shouldRefuseTheRkeyOfADeregisteredRegion() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.pdB.registerMemory(java.nio.ByteBuffer.allocateDirect(64), RW);
      long addr = dst.address();
      int rkey = dst.rkey();
      dst.close();
      assertWriteRefused(rig, src, addr, 8, rkey);
    }
  }

  @Test
  void shouldFlushPostsMadeInErrorState() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, RW);
      rig.qpA.postReceive(new ReceiveWorkRequest(1).wrId(50));
      rig.qpA.toError();
      assertEquals(QpState.ERROR, rig.qpA.state());
      // as in libibverbs, an error completion's opcode is undefined: only its id and status count
      rig.expect(rig.cqA, WcStatus.WR_FLUSH_ERR, 50);
      rig.write(rig.qpA, 3, src, 0, 8, dst.address(), dst.rkey());
      rig.expect(rig.cqA, WcStatus.WR_FLUSH_ERR, 3);
      // RC has no disconnect message: whether the peer notices depends on the RNIC (soft: at
      // once; InfiniBand: on its next send), so the peer's state is not part of the contract.
    }
  }
}
