package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.time.Duration;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A soft completion queue opens its selector (an epoll and an eventfd descriptor) only when a queue
 * pair sending on it posts its first remote request: a host's per-session send queue, which only
 * binds and invalidates windows, holds no descriptor (issue 17's descriptors per session). A poller
 * waiting on a queue without a selector is woken by the push, and one that waits while the first
 * remote request is posted still sees its completion.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SendCqSelectorTest {
  private static final int OWNER = AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND;

  @Test
  void shouldOpenTheSelectorOnlyForRemoteRequests() throws Exception {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      assumeTrue(rig.cqA instanceof SoftCompletionQueue, "soft provider only");
      // B is shaped like a host's session: binds on its send CQ, receives on another
      CompletionQueue sendCq = rig.track(rig.ctxB.createCompletionQueue(16));
      CompletionQueue recvCq = rig.track(rig.ctxB.createCompletionQueue(16));
      QueuePair host =
          rig.track(rig.pdB.createQueuePair(new QueuePairAttributes(sendCq, recvCq, 16, 16, 1, 1)));
      QueuePair client = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(rig.cqA, 16, 1)));
      int both = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
      VerbsTestRig.connect(client, both, host, both);
      SoftCompletionQueue soft = (SoftCompletionQueue) sendCq;
      assertFalse(soft.hasSelector(), "connected, nothing posted");

      MemoryRegion region = rig.register(rig.pdB, 4096, OWNER);
      MemoryWindow mw = rig.track(rig.pdB.allocateMemoryWindow());
      host.postSend(
          new SendWorkRequest(1)
              .wrId(1)
              .bind(mw, region, region.address(), 4096, AccessFlags.REMOTE_WRITE));
      rig.expect(sendCq, WcStatus.SUCCESS, 1);
      assertFalse(soft.hasSelector(), "a bind is local: no selector");

      // a poller parked on the receive CQ (no selector) is woken by the responder's push
      assertFalse(((SoftCompletionQueue) recvCq).hasSelector());
      host.postReceive(new ReceiveWorkRequest(1).wrId(7));
      FutureTask<WorkCompletion> received = waitingPoller(rig, recvCq);
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      SendWorkRequest write =
          new SendWorkRequest(1)
              .wrId(2)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .immData(42)
              .remote(region.address(), mw.rkey());
      write.sgl().set(src, 0, 64);
      long start = System.nanoTime();
      client.postSend(write);
      rig.expect(rig.cqA, WcStatus.SUCCESS, 2);
      WorkCompletion wc = received.get(10, TimeUnit.SECONDS);
      assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode());
      assertEquals(42, wc.immData());
      assertTrue(
          System.nanoTime() - start < VerbsTestRig.COMPLETION_WAIT.toNanos(),
          "woken by the push, not by the end of its wait");

      // the host's first remote request opens its send CQ's selector; a poller waiting meanwhile
      // gets the completion
      FutureTask<WorkCompletion> sent = waitingPoller(rig, sendCq);
      MemoryRegion target =
          rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ);
      MemoryRegion into = rig.register(rig.pdB, 64, AccessFlags.LOCAL_WRITE);
      SendWorkRequest read =
          new SendWorkRequest(1)
              .wrId(3)
              .opcode(WrOpcode.RDMA_READ)
              .remote(target.address(), target.rkey());
      read.sgl().set(into, 0, 64);
      host.postSend(read);
      assertTrue(soft.hasSelector(), "a remote request opens the selector");
      WorkCompletion done = sent.get(10, TimeUnit.SECONDS);
      assertEquals(3, done.wrId());
      assertEquals(WcStatus.SUCCESS, done.status());
      rig.expectNone(sendCq, Duration.ofMillis(50));
    }
  }

  /** A poller awaiting one completion of {@code cq}, returned once it waits. */
  private static FutureTask<WorkCompletion> waitingPoller(VerbsTestRig rig, CompletionQueue cq) {
    return WaitingPoller.start("send-cq-selector-test-poller", () -> rig.awaitOne(cq));
  }
}
