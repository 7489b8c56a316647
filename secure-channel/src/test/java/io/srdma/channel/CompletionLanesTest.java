package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Completion lanes driven by hand on the loopback provider: joining balances and grows the lane's
 * queue before the queue pair is made, completions of an unregistered queue pair are dropped and
 * counted, a failed queue fails every client of its lane, and a failed lane is replaced.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompletionLanesTest {
  private static boolean alive(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.isAlive() && t.getName().equals(name));
  }

  private static DeviceContext open() {
    return RdmaProviders.firstDevice("loopback").open(new DeviceOptions());
  }

  @Test
  void shouldBalanceClientsAndGrowTheQueueBeforeTheQueuePairIsMadeAndShrinkItBack()
      throws InterruptedException {
    try (DeviceContext ctx = open()) {
      CompletionLanes lanes = new CompletionLanes(ctx);
      int count = CompletionLanes.count();
      CompletionLane[] joined = new CompletionLane[4 * count];
      for (int i = 0; i < joined.length; i++) {
        joined[i] = lanes.join(100, 8);
      }
      int[] expected = new int[count];
      java.util.Arrays.fill(expected, 4);
      assertArrayEquals(expected, lanes.clientsPerLane());
      for (int k = 0; k < count; k++) {
        assertTrue(alive(CompletionLane.THREAD_PREFIX + k));
      }
      assertTrue(joined[0].cq().capacity() >= 400, "grown: " + joined[0].cq().capacity());
      for (CompletionLane lane : joined) {
        lanes.leave(lane, -1, 100);
      }
      java.util.Arrays.fill(expected, 0);
      assertArrayEquals(expected, lanes.clientsPerLane());
      // given back at the lane's next drained poll (an idle lane's park ends within 100 ms)
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (joined[0].cq().capacity() > CompletionLane.MIN_CAPACITY
          && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertEquals(CompletionLane.MIN_CAPACITY, joined[0].cq().capacity(), "shrunk back");
      lanes.close();
      for (int k = 0; k < count; k++) {
        assertTrue(!alive(CompletionLane.THREAD_PREFIX + k), "lane thread " + k + " stopped");
      }
    }
  }

  @Test
  void shouldTakeALaneWithRoomWhenTheEmptiestCannotGrowAndRefuseWhenNoneCan() {
    CompletionLanes lanes;
    System.setProperty(CompletionLanes.COUNT_PROP_NAME, "2");
    try (DeviceContext ctx = open()) {
      try {
        lanes = new CompletionLanes(ctx);
      } finally {
        System.clearProperty(CompletionLanes.COUNT_PROP_NAME);
      }
      int max = ctx.queryDevice().maxCqe();
      CompletionLane lane0 = lanes.join(1, 0);
      CompletionLane lane1 = lanes.join(1, 0);
      assertNotSame(lane0, lane1);
      assertEquals(lane0, lanes.join(1, 0)); // a tie goes to the first
      assertEquals(lane1, lanes.join(max * 3 / 4, 0)); // 2 clients each; lane 1 nearly full
      assertEquals(lane0, lanes.join(1, 0)); // tie again: lane 0 has 3 clients, lane 1 has 2
      // lane 1 has the fewest clients but no room for half the maximum: lane 0 takes it
      assertEquals(lane0, lanes.join(max / 2, 0));
      assertTrue(lane0.cq().capacity() >= max / 2 + 3, "grown: " + lane0.cq().capacity());
      // room nowhere: the provider's refusal
      io.srdma.verbs.VerbsException full =
          org.junit.jupiter.api.Assertions.assertThrows(
              io.srdma.verbs.VerbsException.class, () -> lanes.join(max / 2, 0));
      assertEquals(io.srdma.verbs.VerbsException.Reason.INVALID_ARGUMENT, full.reason());
      assertArrayEquals(new int[] {4, 2}, lanes.clientsPerLane());
      lanes.close();
    }
  }

  @Test
  void shouldDropAndCountCompletionsOfAnUnregisteredQueuePair() throws Exception {
    try (DeviceContext ctx = open()) {
      CompletionLanes lanes = new CompletionLanes(ctx);
      CompletionLane lane = lanes.join(16, 0);
      try (ProtectionDomain pd = ctx.allocateProtectionDomain();
          Writer w = new Writer(ctx, pd, lane, 8)) {
        w.post(3);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lane.dropped() < 3 && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        assertEquals(3, lane.dropped());
      }
      lanes.leave(lane, -1, 16);
      lanes.close();
    }
  }

  @Test
  void shouldFailEveryClientOfALaneWhoseQueueFailsAndReplaceTheLane() throws Exception {
    try (DeviceContext ctx = open()) {
      CompletionLanes lanes = new CompletionLanes(ctx);
      CompletionLane lane = lanes.join(8, 0);
      CompletionTarget victim = new CompletionTarget(new SessionState("victim"), null, null);
      CompletionTarget bystander = new CompletionTarget(new SessionState("bystander"), null, null);
      lane.register(1_000_001, victim);
      lane.register(1_000_002, bystander);
      // a client of another lane (when there is one) keeps its data path
      CompletionLane other = CompletionLanes.count() > 1 ? lanes.join(8, 0) : null;
      CompletionTarget elsewhere = new CompletionTarget(new SessionState("elsewhere"), null, null);
      if (other != null) {
        assertNotSame(lane, other);
        other.register(1_000_003, elsewhere);
      }
      try (ProtectionDomain pd = ctx.allocateProtectionDomain();
          // deeper than what was reserved: 64 completions overrun the lane's queue of 16
          Writer w = new Writer(ctx, pd, lane, 64)) {
        w.post(64);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!lane.failed() && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        assertTrue(lane.failed(), "the lane's queue overran");
        assertEquals(WcStatus.FATAL_ERR, victim.state.dataPathFailure());
        assertEquals(WcStatus.FATAL_ERR, bystander.state.dataPathFailure());
        assertEquals(null, elsewhere.state.dataPathFailure());
        assertEquals(0, lane.poll(), "a failed lane polls nothing");
        CompletionLane fresh = lanes.join(8, 0);
        assertNotSame(lane, fresh, "a failed lane takes no new client");
        assertTrue(!fresh.failed());
        lanes.leave(fresh, -1, 8);
      }
      lanes.leave(lane, 1_000_001, 8);
      if (other != null) {
        lanes.leave(other, 1_000_003, 8);
      }
      lanes.close();
    }
  }

  /** A queue pair on a lane's queue writing to a peer queue pair of its own. */
  private static final class Writer implements AutoCloseable {
    final QueuePair qp;
    final QueuePair peer;
    final io.srdma.verbs.CompletionQueue peerCq;
    final MemoryRegion src;
    final MemoryRegion dst;

    Writer(DeviceContext ctx, ProtectionDomain pd, CompletionLane lane, int depth) {
      qp = pd.createQueuePair(new QueuePairAttributes(lane.cq(), lane.cq(), depth, 1, 1, 1));
      peerCq = ctx.createCompletionQueue(8);
      peer = pd.createQueuePair(QueuePairAttributes.of(peerCq, 4, 1));
      src = pd.registerMemory(ByteBuffer.allocateDirect(64), AccessFlags.LOCAL_WRITE);
      dst =
          pd.registerMemory(
              ByteBuffer.allocateDirect(64), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      qp.init(0);
      peer.init(AccessFlags.REMOTE_WRITE);
      qp.readyToReceive(peer.localInfo());
      peer.readyToReceive(qp.localInfo());
      qp.readyToSend();
      peer.readyToSend();
    }

    void post(int n) {
      SendWorkRequest wr =
          new SendWorkRequest(1).opcode(WrOpcode.RDMA_WRITE).remote(dst.address(), dst.rkey());
      wr.sgl().set(src, 0, 8);
      for (int i = 0; i < n; i++) {
        qp.postSend(wr.wrId(i));
      }
    }

    @Override
    public void close() {
      src.close();
      dst.close();
      qp.close();
      peer.close();
      peerCq.close();
    }
  }
}
