package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Object life cycles, the QP state machine, and verbs that must fail at once. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LifecycleContractTest {

  @Test
  void shouldRefuseRemoteWriteWithoutLocalWriteAndUnknownFlags() {
    try (DeviceContext ctx = TestProviders.device().open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain()) {
      ByteBuffer b = ByteBuffer.allocateDirect(64);
      assertEquals(
          VerbsException.Reason.INVALID_ARGUMENT,
          assertThrows(VerbsException.class, () -> pd.registerMemory(b, AccessFlags.REMOTE_WRITE))
              .reason());
      assertEquals(
          VerbsException.Reason.INVALID_ARGUMENT,
          assertThrows(VerbsException.class, () -> pd.registerMemory(b, 1 << 9)).reason());
    }
  }

  @Test
  void shouldRefuseToCloseParentsWithLiveChildrenAndCloseIdempotently() {
    DeviceContext ctx = TestProviders.device().open(new DeviceOptions());
    ProtectionDomain pd = ctx.allocateProtectionDomain();
    CompletionQueue cq = ctx.createCompletionQueue(16);
    MemoryRegion mr = pd.registerMemory(ByteBuffer.allocateDirect(64), AccessFlags.LOCAL_WRITE);
    QueuePair qp = pd.createQueuePair(QueuePairAttributes.of(cq, 4, 1));
    VerbsException busy = assertThrows(VerbsException.class, pd::close);
    assertEquals(VerbsException.Reason.BUSY, busy.reason());
    assertTrue(
        busy.getMessage().contains("memory region") && busy.getMessage().contains("queue pair"),
        busy.getMessage());
    assertEquals(
        VerbsException.Reason.BUSY, assertThrows(VerbsException.class, cq::close).reason());
    assertEquals(
        VerbsException.Reason.BUSY, assertThrows(VerbsException.class, ctx::close).reason());
    qp.close();
    qp.close();
    mr.close();
    mr.close();
    cq.close();
    pd.close();
    pd.close();
    ctx.close();
    ctx.close();
    assertEquals(
        VerbsException.Reason.CLOSED,
        assertThrows(VerbsException.class, ctx::allocateProtectionDomain).reason());
  }

  @Test
  void shouldWalkTheQueuePairStateMachineInOrderOnly() {
    try (DeviceContext ctx = TestProviders.device().open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(16);
        QueuePair a = pd.createQueuePair(QueuePairAttributes.of(cq, 4, 1));
        QueuePair b = pd.createQueuePair(QueuePairAttributes.of(cq, 4, 1))) {
      assertEquals(QpState.RESET, a.state());
      SendWorkRequest wr = new SendWorkRequest(1).opcode(WrOpcode.SEND);
      assertEquals(
          VerbsException.Reason.INVALID_STATE,
          assertThrows(VerbsException.class, () -> a.postSend(wr)).reason());
      assertEquals(
          VerbsException.Reason.INVALID_STATE,
          assertThrows(VerbsException.class, () -> a.postReceive(new ReceiveWorkRequest(1)))
              .reason());
      assertEquals(
          VerbsException.Reason.INVALID_STATE,
          assertThrows(VerbsException.class, () -> a.readyToReceive(b.localInfo())).reason());
      a.init(AccessFlags.REMOTE_WRITE);
      assertEquals(QpState.INIT, a.state());
      a.postReceive(new ReceiveWorkRequest(1));
      assertEquals(
          VerbsException.Reason.INVALID_STATE,
          assertThrows(VerbsException.class, a::readyToSend).reason());
      assertEquals(
          VerbsException.Reason.INVALID_STATE,
          assertThrows(VerbsException.class, () -> a.init(0)).reason());
      b.init(AccessFlags.REMOTE_WRITE);
      a.readyToReceive(b.localInfo());
      b.readyToReceive(a.localInfo());
      assertEquals(QpState.RTR, a.state());
      assertEquals(
          VerbsException.Reason.INVALID_STATE,
          assertThrows(VerbsException.class, () -> a.postSend(wr)).reason());
      a.readyToSend();
      b.readyToSend();
      assertEquals(QpState.RTS, a.state());
    }
  }

  @Test
  void shouldRefuseAPostBeyondTheSendQueueDepth() {
    try (VerbsTestRig rig = VerbsTestRig.open();
        CompletionQueue cq = rig.ctxA.createCompletionQueue(64);
        QueuePair small = rig.pdA.createQueuePair(new QueuePairAttributes(cq, cq, 2, 2, 1, 1));
        QueuePair peer = rig.pdB.createQueuePair(QueuePairAttributes.of(rig.cqB, 4, 1))) {
      VerbsTestRig.connect(small, 0, peer, 0);
      SendWorkRequest send = new SendWorkRequest(1).opcode(WrOpcode.SEND);
      small.postSend(send.wrId(1));
      small.postSend(send.wrId(2));
      VerbsException full = assertThrows(VerbsException.class, () -> small.postSend(send.wrId(3)));
      assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, full.reason());
    }
  }

  @Test
  void shouldRefuseMoreScatterGatherEntriesThanTheQueuePairAllows() {
    try (VerbsTestRig rig = VerbsTestRig.open();
        CompletionQueue cq = rig.ctxA.createCompletionQueue(16);
        QueuePair narrow = rig.pdA.createQueuePair(QueuePairAttributes.of(cq, 4, 1));
        QueuePair peer = rig.pdB.createQueuePair(QueuePairAttributes.of(rig.cqB, 4, 1))) {
      VerbsTestRig.connect(narrow, 0, peer, AccessFlags.REMOTE_WRITE);
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      SendWorkRequest wr = new SendWorkRequest(2).wrId(1).opcode(WrOpcode.RDMA_WRITE).remote(0, 0);
      wr.sgl().add(src, 0, 8).add(src, 8, 8);
      VerbsException e = assertThrows(VerbsException.class, () -> narrow.postSend(wr));
      assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason());
      SendWorkRequest noOp = new SendWorkRequest(1);
      assertEquals(
          VerbsException.Reason.INVALID_ARGUMENT,
          assertThrows(VerbsException.class, () -> noOp.opcode(null)).reason());
      assertEquals(QpState.RTS, narrow.state(), "a refused post changes nothing");
    }
  }

  @Test
  void shouldRoundTripConnectionInfo() {
    ConnectionInfo info =
        new ConnectionInfo(0xABCDEF, 0x123456, new byte[] {127, 0, 0, 1, 0x12, 0x34});
    assertEquals(info, ConnectionInfo.decode(info.encode()));
    assertThrows(VerbsException.class, () -> ConnectionInfo.decode(new byte[] {1, 2, 3}));
    byte[] bad = info.encode();
    bad[9] = 9;
    assertThrows(VerbsException.class, () -> ConnectionInfo.decode(bad));
  }
}
