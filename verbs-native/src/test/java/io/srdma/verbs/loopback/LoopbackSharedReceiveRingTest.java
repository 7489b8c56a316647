package io.srdma.verbs.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The loopback SRQ's receive ring and the queue pairs' claims on it, driven by hand. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoopbackSharedReceiveRingTest {
  private DeviceContext ctx;
  private LoopbackCompletionQueue cq;

  @BeforeEach
  void open() {
    ctx = RdmaProviders.firstDevice(LoopbackProvider.NAME).open(new DeviceOptions());
    cq = (LoopbackCompletionQueue) ctx.createCompletionQueue(64);
  }

  @AfterEach
  void close() {
    cq.close();
    ctx.close();
  }

  private static void post(LoopbackReceiveQueue ring, long wrId) {
    ReceiveWorkRequest wr = new ReceiveWorkRequest(1).wrId(wrId);
    wr.sgl().add(0x1000 + wrId, 64, 7);
    ring.post(wr, 1, false);
  }

  private WorkCompletion one() {
    WorkCompletion[] out = {new WorkCompletion()};
    assertEquals(1, cq.await(out, Duration.ofSeconds(10)), "one completion");
    return out[0];
  }

  private void expectNone() {
    WorkCompletion[] out = {new WorkCompletion()};
    assertEquals(0, cq.poll(out), () -> "unexpected " + out[0]);
  }

  @Test
  void shouldFlushOnlyTheReceiveAQueuePairHadTakenAndLeaveTheRestShared() {
    LoopbackReceiveQueue ring = LoopbackReceiveQueue.sharedRing(8, 1);
    LoopbackReceiveQueue a = LoopbackReceiveQueue.claiming(ring, cq, 0xA);
    LoopbackReceiveQueue b = LoopbackReceiveQueue.claiming(ring, cq, 0xB);
    post(ring, 1);
    post(ring, 2);
    post(ring, 3);

    long taken = a.head();
    assertTrue(taken >= 0, "A takes the oldest receive");
    assertEquals(0x1001, a.address(a.slot(taken), 0));
    a.flush(); // A's error: the receive it took is flushed on A, nothing else
    WorkCompletion flushed = one();
    assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
    assertEquals(1, flushed.wrId());
    assertEquals(0xA, flushed.qpNum());
    expectNone();
    assertEquals(-1, a.head(), "a flushed QP takes nothing more");
    a.complete(taken, WcStatus.SUCCESS, WcOpcode.RECV, 1, false, 0);
    expectNone(); // a completion racing the flush reports nothing

    long p = b.head();
    assertEquals(0x1002, b.address(b.slot(p), 0));
    assertEquals(p, b.head(), "until completed, the taken receive stays B's");
    b.complete(p, WcStatus.SUCCESS, WcOpcode.RECV, 5, true, 0x77);
    WorkCompletion done = one();
    assertEquals(WcStatus.SUCCESS, done.status());
    assertEquals(2, done.wrId());
    assertEquals(0xB, done.qpNum());
    assertEquals(5, done.byteLength());
    assertEquals(0x77, done.immData());
    p = b.head();
    assertEquals(0x1003, b.address(b.slot(p), 0), "receive 3 was left in the ring by A's flush");
    b.complete(p, WcStatus.SUCCESS, WcOpcode.RECV, 0, false, 0);
    assertEquals(3, one().wrId());
    assertEquals(-1, b.head(), "empty: receiver not ready");
  }

  @Test
  void shouldRefusePostsOnceClosedAndWhenFullAndTakeNothingFromAClosedRing() {
    LoopbackReceiveQueue ring = LoopbackReceiveQueue.sharedRing(2, 1);
    LoopbackReceiveQueue a = LoopbackReceiveQueue.claiming(ring, cq, 0xA);
    post(ring, 1);
    post(ring, 2);
    VerbsException full = assertThrows(VerbsException.class, () -> post(ring, 3));
    assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, full.reason());
    assertEquals("post_srq_recv", full.verb());
    ring.close();
    VerbsException closed = assertThrows(VerbsException.class, () -> post(ring, 4));
    assertEquals(VerbsException.Reason.CLOSED, closed.reason());
    assertEquals(-1, a.head(), "the receives left were discarded");
    expectNone();
  }
}
