package io.srdma.bench.verbs;

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
import java.nio.ByteBuffer;
import java.time.Duration;

/** RDMA WRITE between two soft-provider QPs on loopback, each on its own device context. */
final class SoftWriteTransport implements Transport {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int MAX_OUTSTANDING_BATCHES = 2;

  private final DeviceContext ctxA;
  private final DeviceContext ctxB;
  private final ProtectionDomain pdA;
  private final ProtectionDomain pdB;
  private final CompletionQueue cqA;
  private final CompletionQueue cqB;
  private final QueuePair qpA;
  private final QueuePair qpB;
  private final MemoryRegion src;
  private final MemoryRegion dst;
  private final SendWorkRequest[] batch = new SendWorkRequest[BATCH];
  private final SendWorkRequest single = new SendWorkRequest(1);
  private final WorkCompletion[] wcs = {new WorkCompletion()};
  private final boolean postList;
  private int outstanding;

  SoftWriteTransport(int size) {
    this(size, true);
  }

  /** {@code postList}: a batch is one post (one doorbell), else one post per message. */
  SoftWriteTransport(int size, boolean postList) {
    this.postList = postList;
    var device = RdmaProviders.firstDevice("soft");
    ctxA = device.open(new DeviceOptions());
    ctxB = device.open(new DeviceOptions());
    pdA = ctxA.allocateProtectionDomain();
    pdB = ctxB.allocateProtectionDomain();
    cqA = ctxA.createCompletionQueue(1024);
    cqB = ctxB.createCompletionQueue(1024);
    qpA =
        pdA.createQueuePair(QueuePairAttributes.of(cqA, BATCH * (MAX_OUTSTANDING_BATCHES + 1), 1));
    qpB = pdB.createQueuePair(QueuePairAttributes.of(cqB, 16, 1));
    src = pdA.registerMemory(ByteBuffer.allocateDirect(size), AccessFlags.LOCAL_WRITE);
    dst =
        pdB.registerMemory(
            ByteBuffer.allocateDirect(size), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    qpA.init(0);
    qpB.init(AccessFlags.REMOTE_WRITE);
    qpA.readyToReceive(qpB.localInfo());
    qpB.readyToReceive(qpA.localInfo());
    qpA.readyToSend();
    qpB.readyToSend();
    for (int i = 0; i < BATCH; i++) {
      batch[i] =
          new SendWorkRequest(1)
              .wrId(i)
              .opcode(WrOpcode.RDMA_WRITE)
              .signaled(i == BATCH - 1)
              .remote(dst.address(), dst.rkey());
      batch[i].sgl().set(src, 0, size);
    }
    single
        .wrId(-1)
        .opcode(WrOpcode.RDMA_WRITE)
        .signaled(true)
        .remote(dst.address(), dst.rkey())
        .sgl()
        .set(src, 0, size);
  }

  @Override
  public void streamBatch() {
    if (outstanding == MAX_OUTSTANDING_BATCHES) {
      awaitOne();
      outstanding--;
    }
    if (postList) {
      qpA.postSend(batch, BATCH);
    } else {
      for (SendWorkRequest wr : batch) {
        qpA.postSend(wr);
      }
    }
    outstanding++;
  }

  @Override
  public void roundTrip() {
    qpA.postSend(single);
    awaitOne();
  }

  private void awaitOne() {
    if (cqA.await(wcs, WAIT) != 1 || wcs[0].status() != WcStatus.SUCCESS) {
      throw new IllegalStateException("write failed or timed out: " + wcs[0]);
    }
  }

  @Override
  public void close() {
    while (outstanding > 0) {
      awaitOne();
      outstanding--;
    }
    src.close();
    dst.close();
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
