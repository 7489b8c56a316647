package io.srdma.verbs.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What SharedReceiveQueueContractTest does not cover on loopback: receives claimed by peers posting
 * on several threads at once, each taken by exactly one queue pair.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoopbackSharedReceiveQueueTest {
  private static final int PEERS = 4;
  private static final int PER_PEER = 200;
  private static final int SLOT = 64;

  /** A receiving side (one PD, CQ, SRQ) with {@link #PEERS} connected QPs; closes in order. */
  private static final class Star implements AutoCloseable {
    final List<AutoCloseable> open = new ArrayList<>();
    final CompletionQueue cq;
    final SharedReceiveQueue srq;
    final MemoryRegion inbox;
    final QueuePair[] qps = new QueuePair[PEERS];
    final QueuePair[] peerQp = new QueuePair[PEERS];
    final CompletionQueue[] peerCq = new CompletionQueue[PEERS];
    final MemoryRegion[] outbox = new MemoryRegion[PEERS];

    Star(int srqCapacity) {
      DeviceContext ctx = track(device().open(new DeviceOptions()));
      ProtectionDomain pd = track(ctx.allocateProtectionDomain());
      cq = track(ctx.createCompletionQueue(PEERS * PER_PEER * 2));
      srq = track(pd.createSharedReceiveQueue(srqCapacity, 1));
      inbox = track(pd.registerMemory(ByteBuffer.allocateDirect(SLOT), AccessFlags.LOCAL_WRITE));
      for (int i = 0; i < PEERS; i++) {
        DeviceContext pc = track(device().open(new DeviceOptions()));
        ProtectionDomain ppd = track(pc.allocateProtectionDomain());
        peerCq[i] = track(pc.createCompletionQueue(PER_PEER * 2));
        outbox[i] =
            track(ppd.registerMemory(ByteBuffer.allocateDirect(SLOT), AccessFlags.LOCAL_WRITE));
        peerQp[i] = track(ppd.createQueuePair(QueuePairAttributes.of(peerCq[i], PER_PEER, 1)));
        qps[i] =
            track(
                pd.createQueuePair(QueuePairAttributes.of(cq, 16, 1).withSharedReceiveQueue(srq)));
        VerbsTestRig.connect(qps[i], 0, peerQp[i], 0);
      }
    }

    private static io.srdma.verbs.Device device() {
      return RdmaProviders.firstDevice(LoopbackProvider.NAME);
    }

    private <T extends AutoCloseable> T track(T c) {
      open.add(c);
      return c;
    }

    void postReceive(long wrId) {
      ReceiveWorkRequest wr = new ReceiveWorkRequest(1).wrId(wrId);
      wr.sgl().set(inbox, 0, SLOT);
      srq.postReceive(wr);
    }

    /** Peer {@code i} posts {@link #PER_PEER} signaled SENDs, then awaits their completions. */
    void sendAll(int i) {
      SendWorkRequest wr = new SendWorkRequest(1).opcode(WrOpcode.SEND);
      wr.sgl().set(outbox[i], 0, 8);
      for (int m = 0; m < PER_PEER; m++) {
        peerQp[i].postSend(wr.wrId(m));
      }
      WorkCompletion[] out = {new WorkCompletion()};
      for (int m = 0; m < PER_PEER; m++) {
        assertEquals(1, peerCq[i].await(out, VerbsTestRig.COMPLETION_WAIT), "peer " + i);
        assertEquals(WcStatus.SUCCESS, out[0].status(), out[0]::toString);
        assertEquals(m, out[0].wrId(), out[0]::toString);
      }
    }

    @Override
    public void close() {
      for (int i = open.size() - 1; i >= 0; i--) {
        try {
          open.get(i).close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }
  }

  /**
   * Runs every peer's {@link Star#sendAll} on a daemon thread of its own, all released at once, and
   * {@code alongside} on this thread with a {@code done} flag it must stop at.
   */
  private static void sendConcurrently(Star s, Consumer<AtomicBoolean> alongside) throws Exception {
    AtomicBoolean done = new AtomicBoolean();
    CountDownLatch start = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread[] threads = new Thread[PEERS];
    for (int i = 0; i < PEERS; i++) {
      int peer = i;
      threads[i] =
          new Thread(
              () -> {
                try {
                  start.await();
                  s.sendAll(peer);
                } catch (Throwable t) {
                  failure.compareAndSet(null, t);
                }
              },
              "peer-" + i);
      threads[i].setDaemon(true);
      threads[i].start();
    }
    start.countDown();
    Thread watcher =
        new Thread(
            () -> {
              try {
                for (Thread t : threads) {
                  t.join();
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                done.set(true);
              }
            },
            "senders-done");
    watcher.setDaemon(true);
    watcher.start();
    alongside.accept(done);
    watcher.join();
    if (failure.get() != null) {
      throw new AssertionError("a sender failed", failure.get());
    }
  }

  /** Every receive completed exactly once, each queue pair taking one per SEND of its peer. */
  private static void expectEachReceiveOnce(Star s) {
    int total = PEERS * PER_PEER;
    boolean[] seen = new boolean[total];
    Map<Integer, Integer> perQpn = new HashMap<>();
    WorkCompletion[] out = {new WorkCompletion()};
    for (int n = 0; n < total; n++) {
      assertEquals(1, s.cq.await(out, VerbsTestRig.COMPLETION_WAIT), "receive " + n);
      WorkCompletion wc = out[0];
      assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
      int id = (int) wc.wrId();
      assertTrue(!seen[id], () -> "receive completed twice: " + wc);
      seen[id] = true;
      perQpn.merge(wc.qpNum(), 1, Integer::sum);
    }
    for (QueuePair qp : s.qps) {
      assertEquals(PER_PEER, perQpn.getOrDefault(qp.qpn(), 0), "receives of " + qp);
    }
    assertEquals(0, s.cq.await(out, Duration.ofMillis(50)), () -> "extra " + out[0]);
  }

  @Test
  void shouldGiveEachReceiveToExactlyOneQueuePairUnderConcurrentSenders() throws Exception {
    try (Star s = new Star(PEERS * PER_PEER)) {
      for (long wrId = 0; wrId < PEERS * PER_PEER; wrId++) {
        s.postReceive(wrId);
      }
      sendConcurrently(s, done -> {});
      expectEachReceiveOnce(s);
    }
  }

  @Test
  void shouldResumeSendersWaitingForReceivesAsTheyArePosted() throws Exception {
    // a small SRQ refilled while every peer waits for it: receiver not ready, then resumed
    try (Star s = new Star(8)) {
      sendConcurrently(
          s,
          done -> {
            long wrId = 0;
            while (wrId < PEERS * PER_PEER && !done.get()) {
              try {
                s.postReceive(wrId);
                wrId++;
              } catch (VerbsException e) {
                assertEquals(VerbsException.Reason.RESOURCE_EXHAUSTED, e.reason(), e::getMessage);
                Thread.yield(); // full: the senders have not taken them yet
              }
            }
          });
      expectEachReceiveOnce(s);
    }
  }
}
