package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Two connected RC queue pairs, A and B, on two opened device contexts of the provider under test,
 * each with its own PD and CQ. Closes everything in order.
 */
public final class VerbsTestRig implements AutoCloseable {
  /** Longest a test waits for one completion. */
  public static final Duration COMPLETION_WAIT = Duration.ofSeconds(15);

  public final DeviceContext ctxA;
  public final DeviceContext ctxB;
  public final ProtectionDomain pdA;
  public final ProtectionDomain pdB;
  public final CompletionQueue cqA;
  public final CompletionQueue cqB;
  public final QueuePair qpA;
  public final QueuePair qpB;
  private final List<AutoCloseable> extras = new ArrayList<>();
  private final WorkCompletion[] one = {new WorkCompletion()};

  private VerbsTestRig(DeviceOptions options, int accessA, int accessB) {
    Device device = TestProviders.device();
    ctxA = device.open(options);
    ctxB = device.open(options);
    pdA = ctxA.allocateProtectionDomain();
    pdB = ctxB.allocateProtectionDomain();
    cqA = ctxA.createCompletionQueue(4096);
    cqB = ctxB.createCompletionQueue(4096);
    qpA = pdA.createQueuePair(QueuePairAttributes.of(cqA, 256, 4));
    qpB = pdB.createQueuePair(QueuePairAttributes.of(cqB, 256, 4));
    connect(qpA, accessA, qpB, accessB);
  }

  /** A rig whose QPs allow remote WRITE and READ both ways. */
  public static VerbsTestRig open() {
    return open(new DeviceOptions());
  }

  /** A rig with the given device options. */
  public static VerbsTestRig open(DeviceOptions options) {
    int all = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    return new VerbsTestRig(options, all, all);
  }

  /** A rig whose QPs allow only {@code accessA} / {@code accessB} from their peers. */
  public static VerbsTestRig open(int accessA, int accessB) {
    return new VerbsTestRig(new DeviceOptions(), accessA, accessB);
  }

  /** Moves two fresh QPs through INIT, RTR and RTS against each other. */
  public static void connect(QueuePair a, int accessA, QueuePair b, int accessB) {
    a.init(accessA);
    b.init(accessB);
    a.readyToReceive(b.localInfo());
    b.readyToReceive(a.localInfo());
    a.readyToSend();
    b.readyToSend();
  }

  /** Registers a direct buffer of {@code size} bytes in {@code pd}, closed with the rig. */
  public MemoryRegion register(ProtectionDomain pd, int size, int access) {
    MemoryRegion mr = pd.registerMemory(ByteBuffer.allocateDirect(size), access);
    extras.add(mr);
    return mr;
  }

  /** Keeps {@code c} to be closed with the rig, before the QPs. */
  public <T extends AutoCloseable> T track(T c) {
    extras.add(c);
    return c;
  }

  /** Waits for exactly one completion on {@code cq}; fails the test if none comes in time. */
  public WorkCompletion awaitOne(CompletionQueue cq) {
    WorkCompletion[] out = {new WorkCompletion()};
    int n = cq.await(out, COMPLETION_WAIT);
    if (n == 0) {
      fail("no completion within " + COMPLETION_WAIT);
    }
    return out[0];
  }

  /** Waits for one completion and checks its status and identifier. */
  public WorkCompletion expect(CompletionQueue cq, WcStatus status, long wrId) {
    WorkCompletion wc = awaitOne(cq);
    assertEquals(status, wc.status(), () -> "completion " + wc);
    assertEquals(wrId, wc.wrId(), () -> "completion " + wc);
    return wc;
  }

  /**
   * Waits for one completion and checks its identifier and that its status is one of {@code
   * allowed}: where RNICs legitimately differ (the soft provider vs rxe following the IB spec).
   */
  public WorkCompletion expectAny(CompletionQueue cq, long wrId, WcStatus... allowed) {
    WorkCompletion wc = awaitOne(cq);
    assertTrue(
        java.util.List.of(allowed).contains(wc.status()),
        () -> "completion " + wc + ", allowed " + java.util.List.of(allowed));
    assertEquals(wrId, wc.wrId(), () -> "completion " + wc);
    return wc;
  }

  /** Asserts that no completion arrives within {@code wait}. */
  public void expectNone(CompletionQueue cq, Duration wait) {
    int n = cq.await(one, wait);
    assertEquals(0, n, () -> "unexpected completion " + one[0]);
  }

  /** Posts one signaled RDMA WRITE of {@code len} bytes at {@code srcOffset} of {@code src}. */
  public void write(
      QueuePair qp,
      long wrId,
      MemoryRegion src,
      int srcOffset,
      int len,
      long remoteAddr,
      int rkey) {
    SendWorkRequest wr =
        new SendWorkRequest(4).wrId(wrId).opcode(WrOpcode.RDMA_WRITE).remote(remoteAddr, rkey);
    wr.sgl().set(src, srcOffset, len);
    qp.postSend(wr);
  }

  /** Posts one signaled RDMA READ of {@code len} bytes into {@code dst} at {@code dstOffset}. */
  public void read(
      QueuePair qp,
      long wrId,
      MemoryRegion dst,
      int dstOffset,
      int len,
      long remoteAddr,
      int rkey) {
    SendWorkRequest wr =
        new SendWorkRequest(4).wrId(wrId).opcode(WrOpcode.RDMA_READ).remote(remoteAddr, rkey);
    wr.sgl().set(dst, dstOffset, len);
    qp.postSend(wr);
  }

  /** Fills {@code mr} with a byte pattern derived from {@code seed}. */
  public static void fill(MemoryRegion mr, int seed) {
    ByteBuffer b = mr.buffer();
    for (int i = 0; i < b.capacity(); i++) {
      b.put(i, (byte) (seed + i * 31));
    }
  }

  /** Asserts that {@code [from, to)} of {@code mr} holds only {@code value}. */
  public static void assertAll(MemoryRegion mr, int from, int to, byte value) {
    ByteBuffer b = mr.buffer();
    for (int i = from; i < to; i++) {
      if (b.get(i) != value) {
        fail("byte " + i + " is " + b.get(i) + ", expected " + value);
      }
    }
  }

  /** Waits until {@code qp} reaches {@code state}. */
  public static void awaitState(QueuePair qp, QpState state) {
    long deadline = System.nanoTime() + COMPLETION_WAIT.toNanos();
    while (qp.state() != state) {
      assertTrue(
          System.nanoTime() < deadline, () -> "QP stayed " + qp.state() + ", expected " + state);
      LockSupport.parkNanos(1_000_000);
    }
  }

  @Override
  public void close() {
    for (int i = extras.size() - 1; i >= 0; i--) {
      try {
        extras.get(i).close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    qpA.close();
    qpB.close();
    cqA.close();
    cqB.close();
    pdA.close();
    pdB.close();
    ctxA.close();
    ctxB.close();
  }
}
