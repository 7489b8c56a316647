package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceOptions;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Big WRITEs through a socket that stays full: the responder executes a WRITE_WITH_IMM only once a
 * receive is posted, and receives trickle in, so the requester waits on its full socket again and
 * again, several queue pairs at once. Every WRITE completes, its bytes land, and the waiting costs
 * the device context's shared write waiter (one selector, two descriptors, once), not a selector
 * per queue pair (which cost two descriptors each before). Not timed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SoftWriteWaitTest {
  private static final int MIB = 1 << 20;
  private static final int PAIRS = 3;
  // More MiB per QP than its two socket buffers hold together (they hold what the waiting
  // responder does not read): Linux's defaults allow 4 MiB to send and 6 MiB (here 32) to receive.
  private static final int WRITES = 48;

  /** The process's epoll descriptors (one per open selector), as "fd -> target". */
  private static Set<String> selectors() throws IOException {
    Set<String> out = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.contains("eventpoll")) {
            out.add(fd.getFileName() + " -> " + target);
          }
        } catch (IOException gone) {
          // closed while listed: not open now
        }
      }
    }
    return out;
  }

  private static boolean writeWaiterStarted() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.isAlive() && t.getName().startsWith("srdma-soft-wwait-"));
  }

  private static boolean allWaiting(Thread[] writers) {
    for (Thread w : writers) {
      if (w.getState() != Thread.State.TIMED_WAITING) {
        return false;
      }
    }
    return true;
  }

  @Test
  void shouldCompleteBigWritesThroughFullSocketsWithoutASelectorPerQueuePair() throws Exception {
    assumeTrue(
        Files.isDirectory(Path.of("/proc/self/fd")), "needs /proc/self/fd to count descriptors");
    DeviceOptions slowReceiver =
        new DeviceOptions()
            .rnrTimeout(Duration.ofSeconds(60))
            .transportTimeout(Duration.ofSeconds(60));
    try (VerbsTestRig rig = VerbsTestRig.open(slowReceiver)) {
      MemoryRegion src = rig.register(rig.pdA, MIB, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst =
          rig.register(rig.pdB, MIB, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
      VerbsTestRig.fill(src, 7);
      CompletionQueue[] sendCqs = new CompletionQueue[PAIRS];
      CompletionQueue[] recvCqs = new CompletionQueue[PAIRS];
      QueuePair[] senders = new QueuePair[PAIRS];
      QueuePair[] receivers = new QueuePair[PAIRS];
      for (int p = 0; p < PAIRS; p++) {
        sendCqs[p] = rig.track(rig.ctxA.createCompletionQueue(2 * WRITES));
        recvCqs[p] = rig.track(rig.ctxB.createCompletionQueue(2 * WRITES));
        senders[p] =
            rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(sendCqs[p], WRITES, 1)));
        receivers[p] =
            rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(recvCqs[p], WRITES, 1)));
        VerbsTestRig.connect(
            senders[p], AccessFlags.REMOTE_WRITE, receivers[p], AccessFlags.REMOTE_WRITE);
      }
      AtomicReference<Throwable> failed = new AtomicReference<>();
      // the responders execute a WRITE_WITH_IMM only once a receive is posted: they trickle in
      Thread trickle =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < WRITES; i++) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                    for (QueuePair r : receivers) {
                      r.postReceive(new ReceiveWorkRequest(1).wrId(1000 + i));
                    }
                  }
                } catch (Throwable t) {
                  failed.set(t);
                }
              },
              "slow-receiver");
      // a first small WRITE each: a send CQ opens its selector at its QP's first remote request,
      // which is not what this test counts
      for (int p = 0; p < PAIRS; p++) {
        SendWorkRequest first =
            new SendWorkRequest(1)
                .wrId(-1)
                .opcode(WrOpcode.RDMA_WRITE)
                .remote(dst.address(), dst.rkey());
        first.sgl().set(src, 0, 1);
        senders[p].postSend(first);
        rig.expect(sendCqs[p], WcStatus.SUCCESS, -1);
      }
      Set<String> selectorsBefore = selectors();
      Thread[] writers = new Thread[PAIRS];
      for (int p = 0; p < PAIRS; p++) {
        QueuePair qp = senders[p];
        writers[p] =
            new Thread(
                () -> {
                  try {
                    SendWorkRequest wr =
                        new SendWorkRequest(1)
                            .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
                            .remote(dst.address(), dst.rkey());
                    wr.sgl().set(src, 0, MIB);
                    for (int i = 0; i < WRITES; i++) {
                      wr.wrId(i).immData(i);
                      qp.postSend(wr); // blocks while the socket is full
                    }
                  } catch (Throwable t) {
                    failed.set(t);
                  }
                },
                "writer-" + p);
        writers[p].start();
      }
      // nothing is executed before the receives come, so every socket fills and every writer
      // waits (its only timed wait in postSend) at the same time
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!allWaiting(writers) && System.nanoTime() < until) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      assertTrue(allWaiting(writers), "the sockets never filled: " + WRITES + " MiB fit");
      assertTrue(writeWaiterStarted(), "full sockets are waited on by the shared write waiter");
      trickle.start();
      int selectorsWhileFull = 0;
      for (Thread w : writers) {
        while (w.isAlive()) {
          Set<String> added = selectors();
          added.removeAll(selectorsBefore);
          selectorsWhileFull = Math.max(selectorsWhileFull, added.size());
          w.join(5);
        }
      }
      trickle.join();
      assertNull(failed.get());
      WorkCompletion[] one = {new WorkCompletion()};
      for (int p = 0; p < PAIRS; p++) {
        for (int i = 0; i < WRITES; i++) {
          rig.expect(sendCqs[p], WcStatus.SUCCESS, i);
          assertEquals(1, recvCqs[p].await(one, VerbsTestRig.COMPLETION_WAIT), "receive " + i);
          assertEquals(WcStatus.SUCCESS, one[0].status(), one[0]::toString);
          assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, one[0].opcode(), one[0]::toString);
          assertEquals(i, one[0].immData(), one[0]::toString);
        }
      }
      assertEquals(src.buffer(), dst.buffer());
      // the context's shared waiter (one selector), nothing per queue pair; selectors are counted
      // by their epoll descriptors, as other descriptors come and go in a JVM
      int added = selectorsWhileFull;
      assertTrue(
          added <= 1, () -> PAIRS + " QPs waiting on full sockets opened " + added + " selectors");
    }
  }
}
