package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Shared receive queues and a shared completion queue, on the provider under test: a receiving side
 * with one PD, one CQ and one SRQ serving several queue pairs, each connected to a peer of its own
 * (own device context, PD, CQ).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SharedReceiveQueueContractTest {
  private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;
  private static final int SLOT = 256;

  /** The receiving side and its peers; closes everything in order. */
  private static final class Star implements AutoCloseable {
    DeviceContext ctx;
    ProtectionDomain pd;
    CompletionQueue cq;
    SharedReceiveQueue srq;
    MemoryRegion inbox;
    QueuePair[] qps;
    DeviceContext[] peerCtx;
    ProtectionDomain[] peerPd;
    CompletionQueue[] peerCq;
    QueuePair[] peerQp;
    MemoryRegion[] outbox;
    private final List<AutoCloseable> open = new ArrayList<>();

    Star(int peers, int srqCapacity, DeviceOptions options) {
      try {
        build(peers, srqCapacity, options);
      } catch (RuntimeException | Error e) {
        closeOpen();
        throw e;
      }
    }

    private void build(int peers, int srqCapacity, DeviceOptions options) {
      Device device = TestProviders.device();
      ctx = track(device.open(options));
      pd = track(ctx.allocateProtectionDomain());
      cq = track(ctx.createCompletionQueue(1024));
      srq = track(pd.createSharedReceiveQueue(srqCapacity, 2));
      inbox = track(pd.registerMemory(ByteBuffer.allocateDirect(64 * SLOT), RW));
      qps = new QueuePair[peers];
      peerCtx = new DeviceContext[peers];
      peerPd = new ProtectionDomain[peers];
      peerCq = new CompletionQueue[peers];
      peerQp = new QueuePair[peers];
      outbox = new MemoryRegion[peers];
      for (int i = 0; i < peers; i++) {
        peerCtx[i] = track(device.open(options));
        peerPd[i] = track(peerCtx[i].allocateProtectionDomain());
        peerCq[i] = track(peerCtx[i].createCompletionQueue(256));
        outbox[i] =
            track(
                peerPd[i].registerMemory(ByteBuffer.allocateDirect(SLOT), AccessFlags.LOCAL_WRITE));
        peerQp[i] = track(peerPd[i].createQueuePair(QueuePairAttributes.of(peerCq[i], 32, 2)));
        qps[i] =
            track(
                pd.createQueuePair(QueuePairAttributes.of(cq, 32, 2).withSharedReceiveQueue(srq)));
        // the peers allow remote writes on the QP (their memory allows none): the zero-length
        // WRITEs of the send-completion test need it on rxe, which checks the QP's rights first
        VerbsTestRig.connect(qps[i], AccessFlags.REMOTE_WRITE, peerQp[i], AccessFlags.REMOTE_WRITE);
      }
    }

    private <T extends AutoCloseable> T track(T c) {
      open.add(c);
      return c;
    }

    /** Posts a receive of one slot of the inbox ({@code wrId} names the slot) to the SRQ. */
    void postReceive(long wrId) {
      ReceiveWorkRequest wr = new ReceiveWorkRequest(2).wrId(wrId);
      wr.sgl().set(inbox, wrId * SLOT, SLOT);
      srq.postReceive(wr);
    }

    /** Peer {@code i} sends {@code len} bytes of its pattern with opcode {@code op}. */
    void send(int i, long wrId, WrOpcode op, int len, int imm, long remoteSlot) {
      ByteBuffer b = outbox[i].buffer();
      for (int k = 0; k < len; k++) {
        b.put(k, pattern(i, wrId, k));
      }
      SendWorkRequest wr = new SendWorkRequest(2).wrId(wrId).opcode(op).immData(imm);
      if (op == WrOpcode.RDMA_WRITE_WITH_IMM) {
        wr.remote(inbox.address() + remoteSlot * SLOT, inbox.rkey());
      }
      wr.sgl().set(outbox[i], 0, len);
      peerQp[i].postSend(wr);
    }

    /** Closes the receiving queue pairs (and their peers), leaving the SRQ open. */
    void closeQueuePairs() {
      for (int i = 0; i < qps.length; i++) {
        qps[i].close();
        peerQp[i].close();
      }
    }

    @Override
    public void close() {
      closeOpen();
    }

    /** Closes in reverse order of opening: QPs before the SRQ and the CQs they use. */
    private void closeOpen() {
      for (int i = open.size() - 1; i >= 0; i--) {
        try {
          open.get(i).close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }
  }

  private static byte pattern(int peer, long wrId, int k) {
    return (byte) (peer * 59 + wrId * 7 + k * 31 + 1);
  }

  private static WorkCompletion awaitOne(CompletionQueue cq) {
    WorkCompletion[] out = {new WorkCompletion()};
    int n = cq.await(out, VerbsTestRig.COMPLETION_WAIT);
    assertEquals(1, n, "no completion within " + VerbsTestRig.COMPLETION_WAIT);
    return out[0];
  }

  private static void expectSent(Star s, int peer, long wrId) {
    WorkCompletion wc = awaitOne(s.peerCq[peer]);
    assertEquals(WcStatus.SUCCESS, wc.status(), () -> "peer " + peer + ": " + wc);
    assertEquals(wrId, wc.wrId(), () -> "peer " + peer + ": " + wc);
  }

  private static void expectNone(CompletionQueue cq, Duration wait) {
    WorkCompletion[] out = {new WorkCompletion()};
    assertEquals(0, cq.await(out, wait), () -> "unexpected completion " + out[0]);
  }

  /** One message a peer sent, as the receiving side should see it. */
  private record Expected(
      int qpn, WcOpcode opcode, int length, boolean hasImm, int imm, int peer) {}

  @Test
  void shouldShareReceivesAcrossQueuePairsAndNameTheSourceOfEachCompletion() {
    int peers = 3;
    try (Star s = new Star(peers, 32, new DeviceOptions())) {
      int messages = 9;
      for (long wrId = 0; wrId < messages; wrId++) {
        s.postReceive(wrId);
      }
      // round robin over the peers: SEND, SEND_WITH_IMM, WRITE_WITH_IMM; each message waits for
      // its sender's completion, so the SRQ's receives are consumed in posting order
      Map<Long, Expected> expected = new HashMap<>();
      long remoteSlot = 40;
      for (int m = 0; m < messages; m++) {
        int peer = m % peers;
        long wrId = m;
        int len = 17 + m * 5;
        int imm = 0x5100 + m;
        WrOpcode op =
            switch (m / peers) {
              case 0 -> WrOpcode.SEND;
              case 1 -> WrOpcode.SEND_WITH_IMM;
              default -> WrOpcode.RDMA_WRITE_WITH_IMM;
            };
        s.send(peer, 1000 + m, op, len, imm, remoteSlot + m);
        expectSent(s, peer, 1000 + m);
        boolean withImm = op != WrOpcode.SEND;
        WcOpcode recv =
            op == WrOpcode.RDMA_WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV;
        expected.put(wrId, new Expected(s.qps[peer].qpn(), recv, len, withImm, imm, peer));
      }
      for (int m = 0; m < messages; m++) {
        WorkCompletion wc = awaitOne(s.cq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        Expected e = expected.remove(wc.wrId());
        assertNotNull(e, () -> "a completion for no receive or twice: " + wc);
        assertEquals(e.qpn(), wc.qpNum(), () -> "the source QP of " + wc);
        assertEquals(e.opcode(), wc.opcode(), wc::toString);
        assertEquals(e.length(), wc.byteLength(), wc::toString);
        assertEquals(e.hasImm(), wc.hasImm(), wc::toString);
        if (e.hasImm()) {
          assertEquals(e.imm(), wc.immData(), wc::toString);
        }
        // a SEND lands in the receive's slot; a WRITE_WITH_IMM where it was written
        long slot = e.opcode() == WcOpcode.RECV ? wc.wrId() : remoteSlot + wc.wrId();
        for (int k = 0; k < e.length(); k++) {
          assertEquals(
              pattern(e.peer(), 1000 + wc.wrId(), k),
              s.inbox.buffer().get((int) (slot * SLOT + k)),
              "byte " + k + " of message " + wc.wrId());
        }
      }
      assertTrue(expected.isEmpty(), () -> "no completion for " + expected);
      expectNone(s.cq, Duration.ofMillis(100));
    }
  }

  @Test
  void shouldNameTheQueuePairOfEachSendCompletionOnTheSharedCq() {
    int peers = 3;
    try (Star s = new Star(peers, 4, new DeviceOptions())) {
      for (int i = 0; i < peers; i++) {
        // zero-length WRITE: completes without remote memory (C9-88, DataTransferContractTest)
        SendWorkRequest wr =
            new SendWorkRequest(1).wrId(500 + i).opcode(WrOpcode.RDMA_WRITE).remote(0, 0);
        wr.sgl().clear();
        s.qps[i].postSend(wr);
      }
      boolean[] seen = new boolean[peers];
      for (int i = 0; i < peers; i++) {
        WorkCompletion wc = awaitOne(s.cq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(WcOpcode.RDMA_WRITE, wc.opcode(), wc::toString);
        int qp = (int) wc.wrId() - 500;
        assertEquals(s.qps[qp].qpn(), wc.qpNum(), () -> "the source QP of " + wc);
        assertTrue(!seen[qp], () -> "twice: " + wc);
        seen[qp] = true;
      }
      expectNone(s.cq, Duration.ofMillis(100));
    }
  }

  @Test
  void shouldServeMoreMessagesThanItsCapacityWhenRefilled() {
    int peers = 3;
    int capacity = 7;
    try (Star s = new Star(peers, capacity, new DeviceOptions())) {
      assertTrue(s.srq.capacity() >= capacity, () -> "capacity " + s.srq.capacity());
      for (long wrId = 0; wrId < capacity; wrId++) {
        s.postReceive(wrId);
      }
      int[] perQp = new int[peers];
      for (int m = 0; m < 4 * capacity; m++) {
        int peer = (m * 2 + m / peers) % peers;
        s.send(peer, m, WrOpcode.SEND, 8, 0, 0);
        expectSent(s, peer, m);
        WorkCompletion wc = awaitOne(s.cq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(s.qps[peer].qpn(), wc.qpNum(), wc::toString);
        assertEquals(m % capacity, wc.wrId(), () -> "receives are taken oldest first: " + wc);
        perQp[peer]++;
        s.postReceive(wc.wrId()); // refill
      }
      for (int i = 0; i < peers; i++) {
        assertTrue(perQp[i] > 0, "every queue pair took receives from the SRQ");
      }
    }
  }

  @Test
  void shouldHoldASendUntilTheSharedQueueIsRefilledWithinTheRnrBudget() {
    try (Star s = new Star(2, 8, new DeviceOptions())) {
      s.postReceive(0);
      s.send(0, 10, WrOpcode.SEND, 8, 0, 0);
      expectSent(s, 0, 10);
      s.send(1, 11, WrOpcode.SEND, 8, 0, 0);
      expectNone(s.peerCq[1], Duration.ofMillis(300)); // receiver not ready: the sender retries
      WorkCompletion first = awaitOne(s.cq);
      assertEquals(0, first.wrId(), first::toString);
      assertEquals(s.qps[0].qpn(), first.qpNum(), first::toString);
      s.postReceive(1);
      expectSent(s, 1, 11);
      WorkCompletion second = awaitOne(s.cq);
      assertEquals(WcStatus.SUCCESS, second.status(), second::toString);
      assertEquals(1, second.wrId(), second::toString);
      assertEquals(s.qps[1].qpn(), second.qpNum(), second::toString);
    }
  }

  @Test
  void shouldFailASendWhenTheSharedQueueStaysEmpty() {
    DeviceOptions fastRnr = new DeviceOptions().rnrTimeout(Duration.ofMillis(200));
    try (Star s = new Star(2, 8, fastRnr)) {
      s.send(1, 12, WrOpcode.SEND, 8, 0, 0);
      WorkCompletion wc = awaitOne(s.peerCq[1]);
      assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status(), wc::toString);
      VerbsTestRig.awaitState(s.peerQp[1], QpState.ERROR);
      // the other queue pair is unaffected
      s.postReceive(3);
      s.send(0, 13, WrOpcode.SEND, 8, 0, 0);
      expectSent(s, 0, 13);
      WorkCompletion got = awaitOne(s.cq);
      assertEquals(WcStatus.SUCCESS, got.status(), got::toString);
      assertEquals(3, got.wrId(), got::toString);
      assertEquals(s.qps[0].qpn(), got.qpNum(), got::toString);
    }
  }

  @Test
  void shouldNotFlushTheSharedReceivesWhenOneQueuePairFails() {
    try (Star s = new Star(2, 8, new DeviceOptions())) {
      s.postReceive(0);
      s.postReceive(1);
      s.qps[0].toError();
      VerbsTestRig.awaitState(s.qps[0], QpState.ERROR);
      // as in libibverbs: a QP's error flushes its own receive queue, and it has none
      expectNone(s.cq, Duration.ofMillis(300));
      for (long wrId = 0; wrId < 2; wrId++) {
        s.send(1, 20 + wrId, WrOpcode.SEND, 4, 0, 0);
        expectSent(s, 1, 20 + wrId);
        WorkCompletion wc = awaitOne(s.cq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(wrId, wc.wrId(), wc::toString);
        assertEquals(s.qps[1].qpn(), wc.qpNum(), wc::toString);
      }
    }
  }

  @Test
  void shouldRefuseReceivesPostedToTheQueuePairAndPostsBeyondCapacity() {
    try (Star s = new Star(1, 7, new DeviceOptions())) {
      ReceiveWorkRequest wr = new ReceiveWorkRequest(1).wrId(1);
      wr.sgl().set(s.inbox, 0, 16);
      VerbsException onQp = assertThrows(VerbsException.class, () -> s.qps[0].postReceive(wr));
      assertEquals(VerbsException.Reason.INVALID_ARGUMENT, onQp.reason(), onQp::getMessage);
      assertTrue(onQp.getMessage().contains("shared receive queue"), onQp::getMessage);

      ReceiveWorkRequest wide = new ReceiveWorkRequest(3).wrId(2);
      wide.sgl().add(s.inbox, 0, 8).add(s.inbox, 8, 8).add(s.inbox, 16, 8);
      VerbsException tooWide = assertThrows(VerbsException.class, () -> s.srq.postReceive(wide));
      assertEquals(VerbsException.Reason.INVALID_ARGUMENT, tooWide.reason(), tooWide::getMessage);

      for (int i = 0; i < s.srq.capacity(); i++) {
        s.srq.postReceive(wr);
      }
      VerbsException full = assertThrows(VerbsException.class, () -> s.srq.postReceive(wr));
      assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, full.reason(), full::getMessage);
    }
  }

  @Test
  void shouldRefuseAQueuePairWithTheSharedQueueOfAnotherDomain() {
    try (Star s = new Star(1, 4, new DeviceOptions());
        ProtectionDomain other = s.ctx.allocateProtectionDomain()) {
      QueuePairAttributes attributes =
          QueuePairAttributes.of(s.cq, 4, 1).withSharedReceiveQueue(s.srq);
      VerbsException e =
          assertThrows(VerbsException.class, () -> other.createQueuePair(attributes));
      assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason(), e::getMessage);
    }
  }

  @Test
  void shouldRefuseToCloseWhileQueuePairsUseItAndCloseOnceTheyAreGone() {
    try (Star s = new Star(2, 4, new DeviceOptions())) {
      s.postReceive(0);
      VerbsException busy = assertThrows(VerbsException.class, s.srq::close);
      assertEquals(VerbsException.Reason.BUSY, busy.reason(), busy::getMessage);
      assertTrue(busy.getMessage().contains("queue pair"), busy::getMessage);
      VerbsException pdBusy = assertThrows(VerbsException.class, s.pd::close);
      assertEquals(VerbsException.Reason.BUSY, pdBusy.reason(), pdBusy::getMessage);
      // still in service after the refusal
      s.send(1, 30, WrOpcode.SEND, 4, 0, 0);
      expectSent(s, 1, 30);
      assertEquals(s.qps[1].qpn(), awaitOne(s.cq).qpNum());

      s.closeQueuePairs();
      s.postReceive(1); // waits in the SRQ; discarded by close
      s.srq.close();
      s.srq.close(); // idempotent
      VerbsException closed = assertThrows(VerbsException.class, () -> s.postReceive(2));
      assertEquals(VerbsException.Reason.CLOSED, closed.reason(), closed::getMessage);
      QueuePairAttributes attributes =
          QueuePairAttributes.of(s.cq, 4, 1).withSharedReceiveQueue(s.srq);
      VerbsException late =
          assertThrows(VerbsException.class, () -> s.pd.createQueuePair(attributes));
      assertEquals(VerbsException.Reason.CLOSED, late.reason(), late::getMessage);
      expectNone(s.cq, Duration.ofMillis(100));
    }
  }
}
