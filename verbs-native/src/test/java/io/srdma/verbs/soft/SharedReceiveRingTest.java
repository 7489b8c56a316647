package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The soft SRQ's receive ring and the queue pairs' claims on it, driven by hand. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedReceiveRingTest {
  private DeviceContext ctx;
  private SoftCompletionQueue cq;

  @BeforeEach
  void open() {
    ctx = RdmaProviders.firstDevice("soft").open(new DeviceOptions());
    cq = (SoftCompletionQueue) ctx.createCompletionQueue(4096);
  }

  @AfterEach
  void close() {
    cq.close();
    ctx.close();
  }

  private static void post(ReceiveQueue ring, long wrId) {
    ReceiveWorkRequest wr = new ReceiveWorkRequest(1).wrId(wrId);
    wr.sgl().add(0x1000 + wrId, 64, 7);
    ring.post(wr, 1, false);
  }

  private WorkCompletion one() {
    WorkCompletion[] out = {new WorkCompletion()};
    assertEquals(1, cq.await(out, Duration.ofSeconds(10)), "one completion");
    return out[0];
  }

  @Test
  void shouldFlushOnlyTheReceiveAQueuePairHadTakenAndLeaveTheRestShared()
      throws InterruptedException {
    ReceiveQueue ring = ReceiveQueue.sharedRing(8, 1);
    ReceiveQueue a = ReceiveQueue.claiming(ring, cq, 0xA);
    ReceiveQueue b = ReceiveQueue.claiming(ring, cq, 0xB);
    post(ring, 1);
    post(ring, 2);
    post(ring, 3);
    long soon = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);

    int slot = a.awaitHead(soon);
    assertEquals(1, a.wrId(slot));
    assertEquals(0x1001, a.address(slot, 0));
    a.flush(); // A's error: the receive it took is flushed on A, nothing else
    WorkCompletion flushed = one();
    assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
    assertEquals(1, flushed.wrId());
    assertEquals(0xA, flushed.qpNum());
    assertEquals(-1, a.awaitHead(soon), "a flushed QP takes nothing more");

    slot = b.awaitHead(soon);
    assertEquals(2, b.wrId(slot));
    assertEquals(2, b.wrId(b.awaitHead(soon)), "until completed, the taken receive stays B's");
    b.complete(WcStatus.SUCCESS, WcOpcode.RECV, 5, true, 0x77);
    WorkCompletion done = one();
    assertEquals(WcStatus.SUCCESS, done.status());
    assertEquals(2, done.wrId());
    assertEquals(0xB, done.qpNum());
    assertEquals(5, done.byteLength());
    assertEquals(0x77, done.immData());
    assertEquals(3, b.wrId(b.awaitHead(soon)), "receive 3 was left in the ring by A's flush");
    b.complete(WcStatus.SUCCESS, WcOpcode.RECV, 0, false, 0);
    assertEquals(3, one().wrId());
    assertEquals(-1, b.awaitHead(System.nanoTime()), "empty: receiver not ready");
  }

  @Test
  void shouldHandEachReceiveToExactlyOneOfManyQueuePairs() throws InterruptedException {
    int receives = 1000;
    ReceiveQueue ring = ReceiveQueue.sharedRing(receives, 1);
    for (int i = 0; i < receives; i++) {
      post(ring, i);
    }
    int consumers = 4;
    Thread[] threads = new Thread[consumers];
    int[] taken = new int[consumers];
    for (int t = 0; t < consumers; t++) {
      ReceiveQueue claims = ReceiveQueue.claiming(ring, cq, 0x100 + t);
      int index = t;
      threads[t] =
          new Thread(
              () -> {
                try {
                  while (claims.awaitHead(System.nanoTime()) >= 0) {
                    claims.complete(WcStatus.SUCCESS, WcOpcode.RECV, 1, false, 0);
                    taken[index]++;
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "srq-consumer-" + t);
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      assertFalse(t.isAlive(), t.getName() + " finished");
    }
    BitSet seen = new BitSet(receives);
    int[] perQp = new int[consumers];
    WorkCompletion[] out = new WorkCompletion[64];
    for (int i = 0; i < out.length; i++) {
      out[i] = new WorkCompletion();
    }
    int got = 0;
    while (got < receives) {
      int n = cq.await(out, Duration.ofSeconds(10));
      assertTrue(n > 0, "completions stopped at " + got);
      for (int i = 0; i < n; i++) {
        int wrId = (int) out[i].wrId();
        assertFalse(seen.get(wrId), "receive " + wrId + " completed twice");
        seen.set(wrId);
        perQp[out[i].qpNum() - 0x100]++;
      }
      got += n;
    }
    assertEquals(receives, seen.cardinality());
    for (int t = 0; t < consumers; t++) {
      assertEquals(taken[t], perQp[t], "completions name the QP that took the receive");
    }
  }

  @Test
  void shouldRefusePostsOnceClosedAndWhenFull() {
    ReceiveQueue ring = ReceiveQueue.sharedRing(2, 1);
    post(ring, 1);
    post(ring, 2);
    VerbsException full = assertThrows(VerbsException.class, () -> post(ring, 3));
    assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, full.reason());
    assertEquals("post_srq_recv", full.verb());
    ring.close();
    VerbsException closed = assertThrows(VerbsException.class, () -> post(ring, 4));
    assertEquals(VerbsException.Reason.CLOSED, closed.reason());
  }
}
