package io.srdma.verbs.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProvider;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the contract suite does not cover: in-process connection, waiting for the peer, the CQ. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoopbackProviderTest {
  private static final int RW =
      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

  @Test
  void shouldBeSelectableByNameButNeverByAuto() {
    RdmaProvider p = RdmaProviders.select("loopback");
    assertEquals("loopback0", p.devices().get(0).name());
    assertNotEquals("loopback", RdmaProviders.select("auto").name());
  }

  @Test
  void shouldRefuseToConnectToAnUnknownOrForeignAddress() {
    try (LoopbackPair p = new LoopbackPair(new DeviceOptions())) {
      p.qpA.init(0);
      ConnectionInfo b = p.qpB.localInfo();
      ConnectionInfo stale = new ConnectionInfo(b.qpn(), b.psn(), new byte[12]);
      VerbsException unknown =
          assertThrows(VerbsException.class, () -> p.qpA.readyToReceive(stale));
      assertEquals(VerbsException.Reason.INVALID_ARGUMENT, unknown.reason());
      ConnectionInfo soft = new ConnectionInfo(b.qpn(), b.psn(), new byte[] {127, 0, 0, 1, 1, 2});
      VerbsException foreign = assertThrows(VerbsException.class, () -> p.qpA.readyToReceive(soft));
      assertTrue(foreign.getMessage().contains("not a loopback"), foreign.getMessage());
      ConnectionInfo wrongQpn = new ConnectionInfo(b.qpn() ^ 1, b.psn(), b.address());
      VerbsException mismatch =
          assertThrows(VerbsException.class, () -> p.qpA.readyToReceive(wrongQpn));
      assertTrue(mismatch.getMessage().contains("in this process"), mismatch.getMessage());
      assertEquals(QpState.INIT, p.qpA.state());
    }
  }

  @Test
  void shouldRefuseTheAddressOfAClosedQueuePair() {
    try (LoopbackPair p = new LoopbackPair(new DeviceOptions());
        CompletionQueue cq = p.ctxB.createCompletionQueue(4)) {
      QueuePair gone = p.pdB.createQueuePair(QueuePairAttributes.of(cq, 1, 1));
      ConnectionInfo info = gone.localInfo();
      gone.close();
      p.qpA.init(0);
      assertThrows(VerbsException.class, () -> p.qpA.readyToReceive(info));
    }
  }

  @Test
  void shouldHoldAWriteUntilThePeerReachesReadyToReceive() {
    try (LoopbackPair p = new LoopbackPair(new DeviceOptions())) {
      MemoryRegion src = p.register(p.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = p.register(p.pdB, 64, RW);
      VerbsTestRig.fill(src, 3);
      p.qpA.init(0);
      p.qpB.init(AccessFlags.REMOTE_WRITE);
      p.qpA.readyToReceive(p.qpB.localInfo());
      p.qpA.readyToSend();
      write(p.qpA, 1, src, dst);
      WorkCompletion[] out = {new WorkCompletion()};
      assertEquals(0, p.cqA.await(out, Duration.ofMillis(100)), "B is only in INIT");
      VerbsTestRig.assertAll(dst, 0, 64, (byte) 0);
      p.qpB.readyToReceive(p.qpA.localInfo());
      assertEquals(1, p.cqA.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.SUCCESS, out[0].status());
      assertEquals(src.buffer(), dst.buffer());
    }
  }

  @Test
  void shouldFailAWriteWithRetryExceededWhenThePeerNeverBecomesReady() {
    DeviceOptions fast = new DeviceOptions().transportTimeout(Duration.ofMillis(200));
    try (LoopbackPair p = new LoopbackPair(fast)) {
      MemoryRegion src = p.register(p.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = p.register(p.pdB, 64, RW);
      p.qpA.init(0);
      p.qpB.init(AccessFlags.REMOTE_WRITE);
      p.qpA.readyToReceive(p.qpB.localInfo());
      p.qpA.readyToSend();
      write(p.qpA, 1, src, dst);
      write(p.qpA, 2, src, dst);
      WorkCompletion[] out = {new WorkCompletion()};
      assertEquals(1, p.cqA.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.RETRY_EXC_ERR, out[0].status());
      assertEquals(1, out[0].wrId());
      assertEquals(1, p.cqA.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.WR_FLUSH_ERR, out[0].status());
      assertEquals(QpState.ERROR, p.qpA.state());
    }
  }

  @Test
  void shouldDeliverAWaitingSendWhenTheReceiveIsPostedOnAnotherThread() throws Exception {
    try (LoopbackPair p = LoopbackPair.connected()) {
      MemoryRegion src = p.register(p.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = p.register(p.pdB, 64, AccessFlags.LOCAL_WRITE);
      VerbsTestRig.fill(src, 9);
      SendWorkRequest send = new SendWorkRequest(1).wrId(5).opcode(WrOpcode.SEND);
      send.sgl().set(src, 0, 32);
      p.qpA.postSend(send);
      send.wrId(6).sgl().set(src, 32, 32);
      p.qpA.postSend(send); // queued behind the first, in order
      ReceiveWorkRequest recv = new ReceiveWorkRequest(1);
      Thread receiver =
          new Thread(
              () -> {
                recv.wrId(20).sgl().set(dst, 0, 32);
                p.qpB.postReceive(recv);
                recv.wrId(21).sgl().set(dst, 32, 32);
                p.qpB.postReceive(recv);
              },
              "loopback-test-receiver");
      receiver.start();
      receiver.join(TimeUnit.SECONDS.toMillis(10));
      WorkCompletion[] out = {new WorkCompletion()};
      for (long id : new long[] {5, 6}) {
        assertEquals(1, p.cqA.await(out, VerbsTestRig.COMPLETION_WAIT));
        assertEquals(WcStatus.SUCCESS, out[0].status());
        assertEquals(id, out[0].wrId());
      }
      for (long id : new long[] {20, 21}) {
        assertEquals(1, p.cqB.await(out, VerbsTestRig.COMPLETION_WAIT));
        assertEquals(id, out[0].wrId());
        assertEquals(32, out[0].byteLength());
      }
      assertEquals(src.buffer(), dst.buffer());
    }
  }

  @Test
  void shouldFailAWriteToAClosedPeerWithRetryExceeded() {
    try (LoopbackPair p = LoopbackPair.connected()) {
      MemoryRegion src = p.register(p.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = p.register(p.pdB, 64, RW);
      p.qpB.toError();
      write(p.qpA, 1, src, dst);
      WorkCompletion[] out = {new WorkCompletion()};
      assertEquals(1, p.cqA.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.RETRY_EXC_ERR, out[0].status());
      VerbsTestRig.assertAll(dst, 0, 64, (byte) 0);
    }
  }

  @Test
  void shouldRefuseAWindowBoundToAnotherQueuePairOfTheSameDomain() {
    try (LoopbackPair p = LoopbackPair.connected();
        CompletionQueue cqC = p.ctxA.createCompletionQueue(16);
        CompletionQueue cqD = p.ctxB.createCompletionQueue(16);
        QueuePair qpC = p.pdA.createQueuePair(QueuePairAttributes.of(cqC, 4, 1));
        QueuePair qpD = p.pdB.createQueuePair(QueuePairAttributes.of(cqD, 4, 1))) {
      VerbsTestRig.connect(qpC, LoopbackPair.ALL, qpD, LoopbackPair.ALL);
      MemoryRegion src = p.register(p.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion owner = p.register(p.pdB, 4096, AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
      MemoryWindow mw = p.track(p.pdB.allocateMemoryWindow());
      // bound on D (serving C); used through B (serving A)
      qpD.postSend(
          new SendWorkRequest(1)
              .wrId(1)
              .bind(mw, owner, owner.address(), 4096, AccessFlags.REMOTE_WRITE));
      WorkCompletion[] out = {new WorkCompletion()};
      assertEquals(1, cqD.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.SUCCESS, out[0].status());
      VerbsTestRig.fill(src, 4);
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(2)
              .opcode(WrOpcode.RDMA_WRITE)
              .remote(owner.address(), mw.rkey());
      wr.sgl().set(src, 0, 8);
      p.qpA.postSend(wr);
      assertEquals(1, p.cqA.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.REM_ACCESS_ERR, out[0].status());
      assertEquals(QpState.ERROR, p.qpB.state());
      VerbsTestRig.assertAll(owner, 0, 4096, (byte) 0);
      qpC.postSend(wr.wrId(3));
      assertEquals(1, cqC.await(out, VerbsTestRig.COMPLETION_WAIT));
      assertEquals(WcStatus.SUCCESS, out[0].status(), "through the QP it is bound to");
    }
  }

  @Test
  void shouldIssueDistinctUnpredictableRkeys() {
    try (LoopbackPair p = new LoopbackPair(new DeviceOptions())) {
      Set<Integer> keys = new HashSet<>();
      int highBits = 0;
      for (int i = 0; i < 200; i++) {
        MemoryRegion mr = p.register(p.pdB, 64, RW);
        assertTrue(keys.add(mr.rkey()), "rkey repeated");
        assertNotEquals(0, mr.rkey());
        highBits |= mr.rkey() & 0xFF000000;
      }
      assertEquals(0xFF000000, highBits, "the top 8 bits vary: no index in the key");
    }
  }

  @Test
  void shouldKeepEveryProducersCompletionsInOrderOnASharedQueue() throws Exception {
    try (LoopbackPair p = new LoopbackPair(new DeviceOptions())) {
      LoopbackCompletionQueue cq = (LoopbackCompletionQueue) p.ctxA.createCompletionQueue(64);
      int producers = 4;
      int each = 20_000;
      Thread[] threads = new Thread[producers];
      for (int t = 0; t < producers; t++) {
        int qpn = t;
        threads[t] =
            new Thread(
                () -> {
                  for (int i = 0; i < each; i++) {
                    while (!pushWhenRoom(cq, i, qpn)) {
                      Thread.onSpinWait();
                    }
                  }
                },
                "loopback-test-producer-" + t);
        threads[t].start();
      }
      long[] next = new long[producers];
      WorkCompletion[] out = new WorkCompletion[16];
      for (int i = 0; i < out.length; i++) {
        out[i] = new WorkCompletion();
      }
      int seen = 0;
      while (seen < producers * each) {
        int n = cq.await(out, VerbsTestRig.COMPLETION_WAIT);
        assertTrue(n > 0, "completions stopped after " + seen);
        for (int i = 0; i < n; i++) {
          int q = out[i].qpNum();
          assertEquals(next[q]++, out[i].wrId(), "producer " + q + " out of order");
        }
        seen += n;
      }
      for (Thread t : threads) {
        t.join();
      }
      cq.close();
    }
  }

  /**
   * Pushes unless the queue holds 48 or more: with 4 producers racing past the check it never holds
   * more than 51 of its 64, so the test never overruns it. No lock: producers contend.
   */
  private static boolean pushWhenRoom(LoopbackCompletionQueue cq, long wrId, int qpn) {
    if (cq.pending() >= 48) {
      return false;
    }
    cq.push(wrId, WcStatus.SUCCESS, io.srdma.verbs.WcOpcode.RDMA_WRITE, 0, false, 0, qpn);
    return true;
  }

  @Test
  void shouldReportAnOverrunQueue() {
    try (LoopbackPair p = new LoopbackPair(new DeviceOptions())) {
      LoopbackCompletionQueue cq = (LoopbackCompletionQueue) p.ctxA.createCompletionQueue(2);
      for (int i = 0; i < 3; i++) {
        cq.push(i, WcStatus.SUCCESS, io.srdma.verbs.WcOpcode.SEND, 0, false, 0, 1);
      }
      WorkCompletion[] out = {new WorkCompletion()};
      VerbsException e = assertThrows(VerbsException.class, () -> cq.poll(out));
      assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, e.reason());
      cq.close();
    }
  }

  private static void write(QueuePair qp, long wrId, MemoryRegion src, MemoryRegion dst) {
    SendWorkRequest wr =
        new SendWorkRequest(1)
            .wrId(wrId)
            .opcode(WrOpcode.RDMA_WRITE)
            .remote(dst.address(), dst.rkey());
    wr.sgl().set(src, 0, (int) src.length());
    qp.postSend(wr);
  }
}
