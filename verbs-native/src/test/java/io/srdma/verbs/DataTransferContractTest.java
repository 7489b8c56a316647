package io.srdma.verbs;

import static io.srdma.verbs.VerbsTestRig.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every data verb between two connected RC QPs, on the provider under test. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataTransferContractTest {
  private static final int RW =
      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

  @Test
  void shouldWriteGatheredBytesIntoRemoteMemory() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 8192, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 8192, RW);
      fill(src, 7);
      SendWorkRequest wr =
          new SendWorkRequest(4)
              .wrId(42)
              .opcode(WrOpcode.RDMA_WRITE)
              .remote(dst.address() + 100, dst.rkey());
      wr.sgl().add(src, 0, 1000).add(src, 5000, 24);
      rig.qpA.postSend(wr);
      WorkCompletion wc = rig.expect(rig.cqA, WcStatus.SUCCESS, 42);
      assertEquals(WcOpcode.RDMA_WRITE, wc.opcode());
      assertEquals(rig.qpA.qpn(), wc.qpNum());
      for (int i = 0; i < 1000; i++) {
        assertEquals(src.buffer().get(i), dst.buffer().get(100 + i), "byte " + i);
      }
      for (int i = 0; i < 24; i++) {
        assertEquals(src.buffer().get(5000 + i), dst.buffer().get(1100 + i), "byte " + (1000 + i));
      }
      VerbsTestRig.assertAll(dst, 0, 100, (byte) 0);
      VerbsTestRig.assertAll(dst, 1124, 8192, (byte) 0);
      rig.expectNone(rig.cqB, Duration.ofMillis(100));
    }
  }

  /**
   * InfiniBand C9-88: a zero-length RDMA WRITE carries no R_Key worth checking and touches no
   * memory, so it completes even with an R_Key the responder never issued; the sealed channel posts
   * one, signaled, to learn that the unsignaled writes before it completed.
   */
  @Test
  void shouldCompleteZeroLengthWriteWithoutValidatingTheRkeyAndCoverUnsignaledWrites() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 4096, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 4096, RW);
      fill(src, 13);
      for (int i = 0; i < 4; i++) {
        SendWorkRequest wr =
            new SendWorkRequest(1)
                .wrId(100 + i)
                .opcode(WrOpcode.RDMA_WRITE)
                .remote(dst.address() + i * 1024L, dst.rkey())
                .signaled(false);
        wr.sgl().set(src, i * 1024L, 1024);
        rig.qpA.postSend(wr);
      }
      SendWorkRequest fence =
          new SendWorkRequest(1).wrId(200).opcode(WrOpcode.RDMA_WRITE).remote(0, 0);
      fence.sgl().clear();
      rig.qpA.postSend(fence);
      WorkCompletion wc = rig.expect(rig.cqA, WcStatus.SUCCESS, 200);
      assertEquals(WcOpcode.RDMA_WRITE, wc.opcode());
      // RC completes in order: the fence's completion means the four unsignaled writes landed
      assertEquals(src.buffer(), dst.buffer());
      rig.expectNone(rig.cqA, Duration.ofMillis(100));
      rig.expectNone(rig.cqB, Duration.ofMillis(100));
      // the QP is still usable
      rig.write(rig.qpA, 201, src, 0, 16, dst.address(), dst.rkey());
      rig.expect(rig.cqA, WcStatus.SUCCESS, 201);
    }
  }

  @Test
  void shouldReadRemoteBytesIntoScatteredLocalMemory() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion remote = rig.register(rig.pdB, 4096, RW);
      MemoryRegion local = rig.register(rig.pdA, 4096, AccessFlags.LOCAL_WRITE);
      fill(remote, 3);
      SendWorkRequest wr =
          new SendWorkRequest(4)
              .wrId(9)
              .opcode(WrOpcode.RDMA_READ)
              .remote(remote.address() + 10, remote.rkey());
      wr.sgl().add(local, 0, 50).add(local, 1000, 70);
      rig.qpA.postSend(wr);
      WorkCompletion wc = rig.expect(rig.cqA, WcStatus.SUCCESS, 9);
      assertEquals(WcOpcode.RDMA_READ, wc.opcode());
      assertEquals(120, wc.byteLength());
      for (int i = 0; i < 50; i++) {
        assertEquals(remote.buffer().get(10 + i), local.buffer().get(i));
      }
      for (int i = 0; i < 70; i++) {
        assertEquals(remote.buffer().get(60 + i), local.buffer().get(1000 + i));
      }
    }
  }

  @Test
  void shouldMoveLargeMessagesBothWays() {
    int size = 3 * 1024 * 1024 + 17;
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion a = rig.register(rig.pdA, size, RW);
      MemoryRegion b = rig.register(rig.pdB, size, RW);
      MemoryRegion back = rig.register(rig.pdA, size, AccessFlags.LOCAL_WRITE);
      fill(a, 11);
      rig.write(rig.qpA, 1, a, 0, size, b.address(), b.rkey());
      rig.expect(rig.cqA, WcStatus.SUCCESS, 1);
      assertEquals(a.buffer(), b.buffer());
      rig.read(rig.qpA, 2, back, 0, size, b.address(), b.rkey());
      rig.expect(rig.cqA, WcStatus.SUCCESS, 2);
      assertEquals(a.buffer(), back.buffer());
    }
  }

  @Test
  void shouldDeliverWriteWithImmediateThroughAPostedReceive() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 256, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 256, RW);
      fill(src, 1);
      rig.qpB.postReceive(new ReceiveWorkRequest(1).wrId(77));
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(5)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .remote(dst.address(), dst.rkey())
              .immData(0xCAFEBABE);
      wr.sgl().set(src, 0, 64);
      rig.qpA.postSend(wr);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 5);
      WorkCompletion recv = rig.expect(rig.cqB, WcStatus.SUCCESS, 77);
      assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, recv.opcode());
      assertTrue(recv.hasImm());
      assertEquals(0xCAFEBABE, recv.immData());
      assertEquals(64, recv.byteLength());
      assertEquals(src.buffer().slice(0, 64), dst.buffer().slice(0, 64));
    }
  }

  @Test
  void shouldScatterSendsIntoReceiveBuffers() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 256, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 256, AccessFlags.LOCAL_WRITE);
      fill(src, 5);
      ReceiveWorkRequest recv = new ReceiveWorkRequest(2).wrId(1);
      recv.sgl().add(dst, 0, 10).add(dst, 100, 100);
      rig.qpB.postReceive(recv);
      rig.qpB.postReceive(recvOf(dst));
      SendWorkRequest send = new SendWorkRequest(1).wrId(10).opcode(WrOpcode.SEND);
      send.sgl().set(src, 0, 30);
      rig.qpA.postSend(send);
      send.wrId(11).opcode(WrOpcode.SEND_WITH_IMM).immData(99).sgl().set(src, 30, 5);
      rig.qpA.postSend(send);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 10);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 11);
      WorkCompletion first = rig.expect(rig.cqB, WcStatus.SUCCESS, 1);
      assertEquals(WcOpcode.RECV, first.opcode());
      assertEquals(30, first.byteLength());
      assertFalse(first.hasImm());
      assertEquals(src.buffer().slice(0, 10), dst.buffer().slice(0, 10));
      assertEquals(src.buffer().slice(10, 20), dst.buffer().slice(100, 20));
      WorkCompletion second = rig.expect(rig.cqB, WcStatus.SUCCESS, 2);
      assertEquals(5, second.byteLength());
      assertEquals(99, second.immData());
      assertEquals(src.buffer().slice(30, 5), dst.buffer().slice(200, 5));
    }
  }

  private static ReceiveWorkRequest recvOf(MemoryRegion dst) {
    ReceiveWorkRequest r = new ReceiveWorkRequest(1).wrId(2);
    r.sgl().set(dst, 200, 56);
    return r;
  }

  @Test
  void shouldReportOnlySignaledSuccessesInPostingOrder() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 4096, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 4096, RW);
      SendWorkRequest[] batch = new SendWorkRequest[40];
      for (int i = 0; i < batch.length; i++) {
        batch[i] =
            new SendWorkRequest(1)
                .wrId(i)
                .opcode(WrOpcode.RDMA_WRITE)
                .signaled(i % 10 == 9)
                .remote(dst.address() + 64L * i, dst.rkey());
        batch[i].sgl().set(src, 64L * i, 64);
      }
      fill(src, 9);
      rig.qpA.postSend(batch, batch.length);
      for (int i = 9; i < 40; i += 10) {
        rig.expect(rig.cqA, WcStatus.SUCCESS, i);
      }
      rig.expectNone(rig.cqA, Duration.ofMillis(100));
      assertEquals(src.buffer().slice(0, 2560), dst.buffer().slice(0, 2560));
    }
  }

  @Test
  void shouldKeepManyUnsignaledWritesFlowingWithoutFillingTheSendQueue() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, 64, RW);
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .opcode(WrOpcode.RDMA_WRITE)
              .signaled(false)
              .remote(dst.address(), dst.rkey());
      wr.sgl().set(src, 0, 64);
      for (int i = 0; i < 5000; i++) {
        postWhenRoom(rig.qpA, wr.wrId(i));
      }
      wr.signaled(true).wrId(-1);
      postWhenRoom(rig.qpA, wr);
      rig.expect(rig.cqA, WcStatus.SUCCESS, -1);
    }
  }

  private static void postWhenRoom(QueuePair qp, SendWorkRequest wr) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        qp.postSend(wr);
        return;
      } catch (VerbsException e) {
        assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, e.reason());
        assertTrue(System.nanoTime() < deadline, "send queue never drained");
        Thread.onSpinWait();
      }
    }
  }

  @Test
  void shouldServeTwoQueuePairsOfOneDeviceContextOnLoopback() {
    Device device = TestProviders.device();
    try (DeviceContext ctx = device.open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(64);
        QueuePair a = pd.createQueuePair(QueuePairAttributes.of(cq, 16, 1));
        QueuePair b = pd.createQueuePair(QueuePairAttributes.of(cq, 16, 1));
        MemoryRegion src =
            pd.registerMemory(ByteBuffer.allocateDirect(16), AccessFlags.LOCAL_WRITE);
        MemoryRegion dst = pd.registerMemory(ByteBuffer.allocateDirect(16), RW)) {
      VerbsTestRig.connect(a, AccessFlags.REMOTE_WRITE, b, AccessFlags.REMOTE_WRITE);
      src.buffer().putLong(0, 0x1122334455667788L);
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(1)
              .opcode(WrOpcode.RDMA_WRITE)
              .remote(dst.address(), dst.rkey());
      wr.sgl().set(src, 0, 8);
      a.postSend(wr);
      WorkCompletion[] out = {new WorkCompletion()};
      assertEquals(1, cq.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.SUCCESS, out[0].status());
      assertEquals(0x1122334455667788L, dst.buffer().getLong(0));
    }
  }
}
