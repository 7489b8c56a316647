package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsTestRig;
import io.srdma.verbs.WcStatus;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A connected soft queue pair costs its connections' sockets and no selector of its own while its
 * socket takes what it sends (the write selector is opened only when the socket is full), and one
 * that never posts keeps no buffer for responses.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class QueuePairDescriptorsTest {
  private static final int PAIRS = 32;
  private static final int RW = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

  private static long openFds() throws IOException {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    }
  }

  private static long direct() {
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if ("direct".equals(b.getName())) {
        return b.getMemoryUsed();
      }
    }
    return 0;
  }

  @Test
  void shouldCostOnlyWhatItUses() throws Exception {
    assumeTrue(
        Files.isDirectory(Path.of("/proc/self/fd")), "needs /proc/self/fd to count descriptors");
    try (VerbsTestRig rig = VerbsTestRig.open()) {
      CompletionQueue cqA = rig.track(rig.ctxA.createCompletionQueue(4 * PAIRS));
      CompletionQueue cqB = rig.track(rig.ctxB.createCompletionQueue(4 * PAIRS));
      MemoryRegion src = rig.register(rig.pdA, PAIRS, AccessFlags.LOCAL_WRITE);
      MemoryRegion dst = rig.register(rig.pdB, PAIRS, RW);
      long before = openFds();
      long directBefore = direct();
      List<QueuePair> senders = new ArrayList<>();
      for (int i = 0; i < PAIRS; i++) {
        QueuePair a = rig.track(rig.pdA.createQueuePair(QueuePairAttributes.of(cqA, 4, 1)));
        QueuePair b = rig.track(rig.pdB.createQueuePair(QueuePairAttributes.of(cqB, 4, 1)));
        VerbsTestRig.connect(a, AccessFlags.REMOTE_WRITE, b, AccessFlags.REMOTE_WRITE);
        senders.add(a);
      }
      for (int i = 0; i < PAIRS; i++) {
        rig.write(senders.get(i), i, src, i, 1, dst.address() + i, dst.rkey());
      }
      for (int i = 0; i < PAIRS; i++) {
        var wc = rig.awaitOne(cqA);
        assertEquals(WcStatus.SUCCESS, wc.status(), () -> "completion " + wc);
      }
      long added = openFds() - before;
      long directAdded = direct() - directBefore;
      // only A's queue pairs post: B's requesters keep their idle buffers (no 64 KiB for
      // responses, no header block); A's requesters and both responders have 64 KiB each
      long perPair = 3 * 64 * 1024 + 16 * 1024 + 4096;
      assertTrue(
          directAdded <= PAIRS * perPair + (1 << 20),
          () -> PAIRS + " pairs added " + directAdded + " B of direct memory, over " + perPair);
      // each QP: its requester's socket and the peer responder's accepted end
      assertTrue(
          added <= 4L * PAIRS + 4,
          () -> PAIRS + " connected pairs added " + added + " descriptors, over 4 per pair");
    }
  }
}
