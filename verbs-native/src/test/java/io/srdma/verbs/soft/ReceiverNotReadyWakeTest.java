package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A WRITE_WITH_IMM that finds no receive posted (RNR) waits in the soft responder, and the post of
 * the receive drives that responder at once (an RNIC retries on its RNR timer, which a deployment
 * sets short; the soft responder looked only every millisecond, so a writer whose window ran ahead
 * of the target's reposts lost a millisecond per receive it outran). Each round: the write waits,
 * the receive is posted (to the queue pair, or to the SRQ it takes from), the write lands and
 * completes on both sides, and the post is what woke the responder. Not timed: the loop's wake-ups
 * are counted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReceiverNotReadyWakeTest {
  private static final int ROUNDS = 8;
  private static final int SIZE = 64;

  @Test
  void shouldDriveAResponderWaitingForAReceiveWhenOneIsPosted() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      roundsOfWaitingWrites(rig, rig.qpA, rig.qpB::postReceive, "the queue pair");
    }
  }

  @Test
  void shouldDriveAResponderWaitingOnASharedReceiveQueueWhenOneIsPostedThere() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      soft(rig);
      SharedReceiveQueue srq = rig.track(rig.pdB.createSharedReceiveQueue(4, 1));
      roundsOfWaitingWrites(rig, senderTo(rig, srq), srq::postReceive, "the SRQ");
    }
  }

  /**
   * A responder that waits on an SRQ and ends (its queue pairs closed, the RNR budget spent) leaves
   * no wake-up behind on the SRQ, which outlives them: a peer cannot pile responders up there.
   */
  @Test
  void shouldForgetTheWakeUpOfAResponderThatEndsWhileWaitingOnASharedReceiveQueue() {
    try (VerbsTestRig rig =
        VerbsTestRig.open(new DeviceOptions().rnrTimeout(Duration.ofMillis(200)))) {
      soft(rig);
      SharedReceiveQueue srq = rig.track(rig.pdB.createSharedReceiveQueue(4, 1));
      ReceiveQueue ring = ((SoftSharedReceiveQueue) srq).ring();
      QueuePair sender = senderTo(rig, srq);
      MemoryRegion src = rig.register(rig.pdA, SIZE, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(1)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .remote(dst.address(), dst.rkey());
      wr.sgl().set(src, 0, SIZE);
      sender.postSend(wr);
      awaitWakeUps(ring, 1);
      assertEquals(1, ring.wakeUpsWaiting(), "the waiting responder registered once");
      rig.expect(rig.cqA, WcStatus.RNR_RETRY_EXC_ERR, 1); // the budget ran out: it ended
      sender.close();
      awaitWakeUps(ring, 0);
      assertEquals(0, ring.wakeUpsWaiting(), "nothing left on the SRQ once the responder ended");
    }
  }

  /** Waits (at most 10 s) until {@code ring} holds {@code count} wake-ups; the caller asserts. */
  private static void awaitWakeUps(ReceiveQueue ring, int count) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (ring.wakeUpsWaiting() != count && System.nanoTime() < deadline) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  /** A queue pair of A connected to one of B that takes its receives from {@code srq}. */
  private static QueuePair senderTo(VerbsTestRig rig, SharedReceiveQueue srq) {
    QueuePair sender = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(rig.cqA, 8, 1)));
    QueuePair receiver =
        rig.track(
            rig.pdB.createQueuePair(
                QueuePairAttributes.of(rig.cqB, 8, 1).withSharedReceiveQueue(srq)));
    VerbsTestRig.connect(sender, AccessFlags.REMOTE_WRITE, receiver, AccessFlags.REMOTE_WRITE);
    return sender;
  }

  /**
   * {@link #ROUNDS} writes from {@code sender}, each waiting for the receive {@code post} posts.
   */
  private static void roundsOfWaitingWrites(
      VerbsTestRig rig, QueuePair sender, Consumer<ReceiveWorkRequest> post, String where) {
    SoftDeviceContext target = soft(rig);
    MemoryRegion src = rig.register(rig.pdA, ROUNDS * SIZE, AccessFlags.LOCAL_WRITE);
    MemoryRegion dst =
        rig.register(rig.pdB, ROUNDS * SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    ByteBuffer srcMem = src.buffer();
    ByteBuffer dstMem = dst.buffer();
    SendWorkRequest wr = new SendWorkRequest(1).opcode(WrOpcode.RDMA_WRITE_WITH_IMM);
    ReceiveWorkRequest recv = new ReceiveWorkRequest(1);
    long before = target.responderPokes();
    for (int i = 0; i < ROUNDS; i++) {
      srcMem.putLong(i * SIZE, 0x5EED0000L + i);
      wr.wrId(i).immData(i).remote(dst.address() + (long) i * SIZE, dst.rkey());
      wr.sgl().clear();
      wr.sgl().set(src, (long) i * SIZE, SIZE);
      sender.postSend(wr);
      // receiver not ready: nothing completes, nothing lands
      rig.expectNone(rig.cqA, Duration.ofMillis(50));
      assertEquals(0L, dstMem.getLong(i * SIZE), "nothing placed before a receive is posted");
      post.accept(recv.wrId(100 + i));
      rig.expect(rig.cqA, WcStatus.SUCCESS, i);
      rig.expect(rig.cqB, WcStatus.SUCCESS, 100 + i);
      assertEquals(0x5EED0000L + i, dstMem.getLong(i * SIZE), "round " + i + " landed");
    }
    // each round's write waits (50 ms is long enough for it to reach the responder, except on a
    // stalled machine, where that round's post simply comes first): the posts woke the responder
    long woken = target.responderPokes() - before;
    assertTrue(woken >= 1, "no post to " + where + " woke the waiting responder in " + ROUNDS);
  }

  private static SoftDeviceContext soft(VerbsTestRig rig) {
    assumeTrue(
        rig.ctxB instanceof SoftDeviceContext,
        "needs the soft provider (its responder loop); this run uses "
            + rig.ctxB.getClass().getSimpleName());
    return (SoftDeviceContext) rig.ctxB;
  }
}
