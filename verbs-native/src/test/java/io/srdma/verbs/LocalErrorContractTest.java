package io.srdma.verbs;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Errors found at the requester's side, and receiver-not-ready. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalErrorContractTest {
  private static final int RW =
      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

  @Test
  void shouldCompleteWithLocalProtectionErrorForAForeignLkey() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion dst = rig.register(rig.pdB, 64, RW);
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(1)
              .opcode(WrOpcode.RDMA_WRITE)
              .remote(dst.address(), dst.rkey());
      wr.sgl().add(0x1000, 8, 0x7777);
      rig.qpA.postSend(wr);
      // IB: local protection error; rxe reports an unknown lkey as a local QP operation error
      rig.expectAny(rig.cqA, 1, WcStatus.LOC_PROT_ERR, WcStatus.LOC_QP_OP_ERR);
      VerbsTestRig.awaitState(rig.qpA, QpState.ERROR);
    }
  }

  @Test
  void shouldCompleteWithLocalProtectionErrorForASourceOutsideItsRegion() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 128, RW);
      rig.write(rig.qpA, 1, src, 1, 64, dst.address(), dst.rkey());
      rig.expect(rig.cqA, WcStatus.LOC_PROT_ERR, 1);
    }
  }

  @Test
  void shouldCompleteWithLocalProtectionErrorForAReadIntoMemoryWithoutLocalWrite() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion local = rig.register(rig.pdA, 64, 0);
      MemoryRegion remote = rig.register(rig.pdB, 64, RW);
      rig.read(rig.qpA, 1, local, 0, 8, remote.address(), remote.rkey());
      rig.expect(rig.cqA, WcStatus.LOC_PROT_ERR, 1);
    }
  }

  @Test
  void shouldFailASendLargerThanTheReceiveOnBothSides() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, AccessFlags.LOCAL_WRITE);
      ReceiveWorkRequest recv = new ReceiveWorkRequest(1).wrId(20);
      recv.sgl().set(dst, 0, 16);
      rig.qpB.postReceive(recv);
      SendWorkRequest send = new SendWorkRequest(1).wrId(2).opcode(WrOpcode.SEND);
      send.sgl().set(src, 0, 17);
      rig.qpA.postSend(send);
      // soft: invalid request; rxe: remote operation error. The receiver's side is the same.
      rig.expectAny(rig.cqA, 2, WcStatus.REM_INV_REQ_ERR, WcStatus.REM_OP_ERR);
      // soft: local length error; rxe may report the receive as a local QP operation error
      rig.expectAny(rig.cqB, 20, WcStatus.LOC_LEN_ERR, WcStatus.LOC_QP_OP_ERR);
      VerbsTestRig.assertAll(dst, 0, 64, (byte) 0);
    }
  }

  @Test
  void shouldFailASendWhenNoReceiveIsPostedInTime() {
    DeviceOptions fastRnr = new DeviceOptions().rnrTimeout(Duration.ofMillis(200));
    try (VerbsTestRig rig = VerbsTestRig.open(fastRnr)) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      SendWorkRequest send = new SendWorkRequest(1).wrId(3).opcode(WrOpcode.SEND);
      send.sgl().set(src, 0, 8);
      rig.qpA.postSend(send);
      rig.expect(rig.cqA, WcStatus.RNR_RETRY_EXC_ERR, 3);
      VerbsTestRig.awaitState(rig.qpA, QpState.ERROR);
    }
  }

  @Test
  void shouldFailAWriteWithImmediateWhenNoReceiveIsPostedInTime() {
    DeviceOptions fastRnr = new DeviceOptions().rnrTimeout(Duration.ofMillis(200));
    try (VerbsTestRig rig = VerbsTestRig.open(fastRnr)) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, RW);
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(4)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .remote(dst.address(), dst.rkey());
      wr.sgl().set(src, 0, 8);
      rig.qpA.postSend(wr);
      rig.expect(rig.cqA, WcStatus.RNR_RETRY_EXC_ERR, 4);
    }
  }

  @Test
  void shouldDeliverASendOnceAReceiveIsPostedWithinTheRnrBudget() throws InterruptedException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, AccessFlags.LOCAL_WRITE);
      SendWorkRequest send = new SendWorkRequest(1).wrId(5).opcode(WrOpcode.SEND);
      send.sgl().set(src, 0, 8);
      rig.qpA.postSend(send);
      rig.expectNone(rig.cqA, Duration.ofMillis(300));
      ReceiveWorkRequest recv = new ReceiveWorkRequest(1).wrId(21);
      recv.sgl().set(dst, 0, 64);
      rig.qpB.postReceive(recv);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 5);
      rig.expect(rig.cqB, WcStatus.SUCCESS, 21);
    }
  }
}
