package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A completion queue of {@link CompletionProgress#POLLER}: the responders of the queue pairs whose
 * receives it reports move to it once their HELLO is checked, and its poller places their requests
 * — no device thread between a request and its completion. What must hold: every byte lands and
 * completes as with the device's threads (writes with and without immediate, reads, a receive
 * posted by the poller itself); a connection still in its handshake never reaches the poller; while
 * nobody polls nothing is placed, and it all lands once someone does; a queue pair closed while the
 * poller waits, or while nobody polls, lets go of its responder at once (not after the 5 s bound of
 * a responder's release); the queue closes after its queue pairs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PollerProgressTest {
  private static final int SIZE = 4096;
  private static final int COUNT = 2_000;

  @Test
  void shouldPlaceEveryWriteAndReadOnThePollingThread() throws Exception {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Pair p = pair(rig);
      assertEquals(1, p.hosted.memberCount(), "the checked connection moved to the polled queue");
      MemoryRegion src = rig.register(rig.pdA, SIZE * 16, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(
              rig.pdB,
              SIZE * 16,
              AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
      try (Poller poller = new Poller(p.cqV, p.v)) {
        poller.postReceives(64);
        ByteBuffer s = src.buffer();
        SendWorkRequest wr = new SendWorkRequest(1);
        int window = 0;
        for (int i = 0; i < COUNT; i++) {
          int slot = i % 16;
          s.putLong(slot * SIZE, 0xABCD_0000_0000L + i);
          wr.wrId(i)
              .opcode(i % 3 == 0 ? WrOpcode.RDMA_WRITE : WrOpcode.RDMA_WRITE_WITH_IMM)
              .immData(i)
              .remote(dst.address() + (long) slot * SIZE, dst.rkey())
              .signaled(true);
          wr.sgl().clear();
          wr.sgl().set(src, (long) slot * SIZE, SIZE);
          p.x.postSend(wr);
          if (++window == 8) {
            for (int k = 0; k < 8; k++) {
              assertEquals(WcStatus.SUCCESS, rig.awaitOne(p.cqX).status());
            }
            window = 0;
          }
        }
        for (int k = 0; k < window; k++) {
          assertEquals(WcStatus.SUCCESS, rig.awaitOne(p.cqX).status());
        }
        int withImm = COUNT - (COUNT + 2) / 3;
        poller.awaitReceived(withImm);
        assertEquals(0, poller.failures(), "a receive completed in error");
        // the last 16 writes' values are in place
        ByteBuffer d = dst.buffer();
        for (int i = COUNT - 16; i < COUNT; i++) {
          assertEquals(0xABCD_0000_0000L + i, d.getLong((i % 16) * SIZE), "write " + i);
        }
        // a READ of the target's memory is served by the poller too
        MemoryRegion back = rig.register(rig.pdA, SIZE, AccessFlags.LOCAL_WRITE);
        SendWorkRequest read =
            new SendWorkRequest(1)
                .wrId(77)
                .opcode(WrOpcode.RDMA_READ)
                .remote(dst.address() + (long) ((COUNT - 1) % 16) * SIZE, dst.rkey())
                .signaled(true);
        read.sgl().set(back, 0, SIZE);
        p.x.postSend(read);
        WorkCompletion wc = rig.awaitOne(p.cqX);
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(0xABCD_0000_0000L + COUNT - 1, back.buffer().getLong(0));
        assertEquals(
            Thread.currentThread() != poller.thread,
            true,
            "the test thread is not the poller (sanity)");
        assertTrue(
            poller.placedOnPoller.get(), "no request was placed while the poller was polling");
      }
    }
  }

  @Test
  void shouldPlaceNothingWhileNobodyPollsAndAllOnceSomeoneDoes() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Pair p = pair(rig);
      MemoryRegion src = rig.register(rig.pdA, 64, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      src.buffer().putLong(0, 0x1122334455667788L);
      SendWorkRequest wr =
          new SendWorkRequest(1)
              .wrId(5)
              .opcode(WrOpcode.RDMA_WRITE)
              .remote(dst.address(), dst.rkey())
              .signaled(true);
      wr.sgl().set(src, 0, 64);
      p.x.postSend(wr);
      rig.expectNone(p.cqX, Duration.ofMillis(300)); // nobody polls the target's queue: no ACK
      assertEquals(0L, dst.buffer().getLong(0), "placed although nobody polled");
      WorkCompletion[] none = {new WorkCompletion()};
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      int n = 0;
      while (n == 0 && System.nanoTime() < until) {
        p.cqV.poll(none); // the poll places the write (no completion on the target: no immediate)
        n = p.cqX.poll(none);
      }
      assertEquals(1, n, "the write completed once the target's queue was polled");
      assertEquals(WcStatus.SUCCESS, none[0].status());
      assertEquals(0x1122334455667788L, dst.buffer().getLong(0));
    }
  }

  @Test
  void shouldKeepConnectionsInTheirHandshakeOffThePoller() throws IOException {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Pair p = pair(rig);
      InetSocketAddress responder = ((SoftDeviceContext) rig.ctxB).responderAddress();
      List<SocketChannel> strangers = new ArrayList<>();
      try (Poller poller = new Poller(p.cqV, p.v)) {
        for (int i = 0; i < 8; i++) {
          SocketChannel ch = SocketChannel.open(responder);
          ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7})); // not a HELLO
          strangers.add(ch);
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
        assertEquals(
            1, p.hosted.memberCount(), "an unchecked connection reached the polled queue's loop");
      } finally {
        for (SocketChannel ch : strangers) {
          ch.close();
        }
      }
    }
  }

  @Test
  void shouldReleaseTheResponderAtOnceWhenItsQueuePairClosesWhileThePollerWaits() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Pair p = pair(rig);
      try (Poller poller = new Poller(p.cqV, p.v)) {
        poller.postReceives(4);
        long start = System.nanoTime();
        p.v.close();
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMs < 2_000, "closing the queue pair waited " + tookMs + " ms");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (p.hosted.memberCount() != 0 && System.nanoTime() < until) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        assertEquals(0, p.hosted.memberCount(), "the closed queue pair's responder stayed");
      }
    }
  }

  @Test
  void shouldReleaseTheResponderAtOnceWhenItsQueuePairClosesWhileNobodyPolls() {
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      Pair p = pair(rig);
      long start = System.nanoTime();
      p.v.close();
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(tookMs < 2_000, "closing the queue pair waited " + tookMs + " ms");
      assertEquals(0, p.hosted.memberCount(), "the closed queue pair's responder stayed");
    }
  }

  // ---- rig ----

  /** X (on A) writes to V (on B), whose receives report to the POLLER queue cqV. */
  private record Pair(
      CompletionQueue cqX, CompletionQueue cqV, QueuePair x, QueuePair v, ResponderLoop hosted) {}

  private static Pair pair(VerbsTestRig rig) {
    assumeTrue(
        rig.ctxB instanceof SoftDeviceContext,
        "needs the soft provider (its responders); this run uses "
            + rig.ctxB.getClass().getSimpleName());
    CompletionQueue cqX = rig.track(rig.ctxA.createCompletionQueue(1024));
    CompletionQueue cqV =
        rig.track(rig.ctxB.createCompletionQueue(1024, CompletionProgress.POLLER));
    QueuePair x = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqX, 64, 1)));
    QueuePair v = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqV, 64, 1)));
    VerbsTestRig.connect(
        x,
        AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ,
        v,
        AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
    ResponderLoop hosted = ((SoftCompletionQueue) cqV).hostedLoop();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (hosted.memberCount() == 0 && System.nanoTime() < until) {
      // the move is queued for the first poll: take it
      cqV.poll(new WorkCompletion[] {new WorkCompletion()});
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
    return new Pair(cqX, cqV, x, v, hosted);
  }

  /** Polls {@code cq} continuously on its own thread, reposting one receive per completion. */
  private static final class Poller implements AutoCloseable {
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final Thread thread;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    final AtomicBoolean placedOnPoller = new AtomicBoolean();
    private volatile int received;
    private volatile int failures;

    Poller(CompletionQueue cq, QueuePair qp) {
      this.cq = cq;
      this.qp = qp;
      this.thread = new Thread(this::run, "test-poller");
      thread.setDaemon(true);
      thread.start();
    }

    void postReceives(int n) {
      ReceiveWorkRequest r = new ReceiveWorkRequest(1);
      for (int i = 0; i < n; i++) {
        qp.postReceive(r.wrId(i));
      }
    }

    private void run() {
      WorkCompletion[] wcs = new WorkCompletion[16];
      for (int i = 0; i < wcs.length; i++) {
        wcs[i] = new WorkCompletion();
      }
      ReceiveWorkRequest r = new ReceiveWorkRequest(1);
      try {
        while (!stop.get()) {
          int n = cq.await(wcs, Duration.ofMillis(5));
          for (int i = 0; i < n; i++) {
            if (wcs[i].status() != WcStatus.SUCCESS) {
              failures++;
              continue;
            }
            if (wcs[i].opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
              placedOnPoller.set(true);
              received++;
              qp.postReceive(r.wrId(1000 + received)); // the poller reposts: no wake-up needed
            }
          }
        }
      } catch (RuntimeException e) {
        if (!stop.get()) {
          errors.add(e);
        }
      }
    }

    void awaitReceived(int n) {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (received < n && System.nanoTime() < until) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
      assertEquals(n, received, "receive completions on the polled queue");
      assertTrue(errors.isEmpty(), () -> "the poller failed: " + errors);
    }

    int failures() {
      return failures;
    }

    @Override
    public void close() {
      stop.set(true);
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      assertFalse(thread.isAlive(), "the poller did not stop");
    }
  }
}
