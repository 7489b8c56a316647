package io.srdma.verbs.ibv;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;

/**
 * Java RDMA WRITE latency and bandwidth on the first ibv device, measured the way perftest's {@code
 * ib_write_lat} and {@code ib_write_bw} measure them, so that the two can be compared on the same
 * device: two queue pairs on two device contexts of one JVM, one thread each.
 *
 * <ul>
 *   <li>{@code lat SIZE ITERS}: ping-pong of WRITEs, each side spinning on the last word of its own
 *       buffer until the peer's write lands; reports RTT/2 (typical = median, and average) in µs.
 *   <li>{@code bw SIZE ITERS}: one side streams WRITEs, 128 outstanding, every 16th signaled;
 *       reports MiB/s (perftest's MB/sec).
 * </ul>
 */
public final class WriteBench {
  private static final VarHandle INT =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int RW =
      AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

  private WriteBench() {}

  /** One side: context, PD, CQ, QP and one registered buffer. */
  private static final class Side implements AutoCloseable {
    final DeviceContext ctx;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemoryRegion mr;

    Side(int size) {
      ctx = RdmaProviders.firstDevice("ibv").open(new DeviceOptions());
      pd = ctx.allocateProtectionDomain();
      cq = ctx.createCompletionQueue(1024);
      qp = pd.createQueuePair(QueuePairAttributes.of(cq, 256, 1));
      mr = pd.registerMemory(ByteBuffer.allocateDirect(size), RW);
    }

    @Override
    public void close() {
      qp.close();
      mr.close();
      cq.close();
      pd.close();
      ctx.close();
    }
  }

  /** Entry point. */
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    int size = Integer.parseInt(args[1]);
    int iters = Integer.parseInt(args[2]);
    try (Side a = new Side(size);
        Side b = new Side(size)) {
      a.qp.init(AccessFlags.REMOTE_WRITE);
      b.qp.init(AccessFlags.REMOTE_WRITE);
      a.qp.readyToReceive(b.qp.localInfo());
      b.qp.readyToReceive(a.qp.localInfo());
      a.qp.readyToSend();
      b.qp.readyToSend();
      if (mode.equals("lat")) {
        // warm-up long enough for the JIT to finish: under TCG a compiler thread competing with
        // the two spinning threads for the two vCPUs shows up as latency; then a pause for
        // background compiles to drain
        latency(a, b, size, Math.max(2000, iters), false);
        Thread.sleep(2000);
        latency(a, b, size, iters, true);
      } else {
        bandwidth(a, b, size, Math.max(200, iters / 5), false);
        bandwidth(a, b, size, iters, true);
      }
    }
  }

  private static void latency(Side a, Side b, int size, int iters, boolean report)
      throws Exception {
    int word = (size - 4) & ~3;
    Thread responder = new Thread(() -> pong(b, a, size, word, iters), "srdma-bench-pong");
    responder.setDaemon(true);
    responder.start();
    SendWorkRequest wr = writeTo(a, b, size);
    WorkCompletion[] wc = {new WorkCompletion()};
    ByteBuffer mine = a.mr.buffer();
    ByteBuffer src = a.mr.buffer();
    long[] rtt = new long[iters];
    for (int i = 1; i <= iters; i++) {
      long start = System.nanoTime();
      INT.setVolatile(src, word, i);
      post(a, wr.signaled(i % 16 == 0), wc);
      spinUntil(mine, word, -i);
      rtt[i - 1] = System.nanoTime() - start;
    }
    responder.join(WAIT.toMillis());
    Arrays.sort(rtt);
    double typical = rtt[iters / 2] / 2000.0;
    double avg = Arrays.stream(rtt).average().orElse(0) / 2000.0;
    if (report) {
      System.out.printf(
          "JAVA_WRITE_LAT bytes=%d iters=%d t_typical_us=%.2f t_avg_us=%.2f%n",
          size, iters, typical, avg);
    }
  }

  /** The responder: waits for value i, answers -i into the initiator's buffer. */
  private static void pong(Side self, Side peer, int size, int word, int iters) {
    SendWorkRequest wr = writeTo(self, peer, size);
    WorkCompletion[] wc = {new WorkCompletion()};
    ByteBuffer mine = self.mr.buffer();
    for (int i = 1; i <= iters; i++) {
      spinUntil(mine, word, i);
      INT.setVolatile(mine, word, -i);
      post(self, wr.signaled(i % 16 == 0), wc);
    }
  }

  private static SendWorkRequest writeTo(Side from, Side to, int size) {
    SendWorkRequest wr =
        new SendWorkRequest(1).opcode(WrOpcode.RDMA_WRITE).remote(to.mr.address(), to.mr.rkey());
    wr.sgl().set(from.mr, 0, size);
    return wr;
  }

  private static void post(Side side, SendWorkRequest wr, WorkCompletion[] wc) {
    side.qp.postSend(wr);
    if (wr.signaled()) {
      if (side.cq.await(wc, WAIT) == 0 || wc[0].status() != WcStatus.SUCCESS) {
        throw new IllegalStateException("write did not complete: " + wc[0]);
      }
    }
  }

  private static void spinUntil(ByteBuffer buffer, int word, int value) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    int spins = 0;
    while ((int) INT.getVolatile(buffer, word) != value) {
      if ((++spins & 0xFFFF) == 0 && System.nanoTime() > deadline) {
        throw new IllegalStateException("peer's write of " + value + " never landed");
      }
      // no Thread.onSpinWait(): perftest spins without PAUSE, and under TCG PAUSE exits the vCPU
    }
  }

  private static void bandwidth(Side a, Side b, int size, int iters, boolean report) {
    SendWorkRequest wr = writeTo(a, b, size);
    WorkCompletion[] wcs = new WorkCompletion[32];
    for (int i = 0; i < wcs.length; i++) {
      wcs[i] = new WorkCompletion();
    }
    int depth = 128;
    int every = 16;
    long start = System.nanoTime();
    int posted = 0;
    int completed = 0;
    while (completed < iters) {
      while (posted < iters && posted - completed < depth) {
        posted++;
        a.qp.postSend(wr.signaled(posted % every == 0 || posted == iters).wrId(posted));
      }
      int n = a.cq.await(wcs, WAIT);
      if (n == 0) {
        throw new IllegalStateException("no completion within " + WAIT);
      }
      for (int i = 0; i < n; i++) {
        if (wcs[i].status() != WcStatus.SUCCESS) {
          throw new IllegalStateException("write failed: " + wcs[i]);
        }
        completed = (int) wcs[i].wrId();
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    if (report) {
      System.out.printf(
          "JAVA_WRITE_BW bytes=%d iters=%d MiB_per_s=%.2f seconds=%.3f%n",
          size, iters, (double) size * iters / seconds / (1 << 20), seconds);
    }
  }
}
