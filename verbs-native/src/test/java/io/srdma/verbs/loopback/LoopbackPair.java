package io.srdma.verbs.loopback;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.VerbsTestRig;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** Two loopback device contexts with a PD, a CQ and an unconnected QP each; closes in order. */
final class LoopbackPair implements AutoCloseable {
  static final int ALL = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
  final DeviceContext ctxA;
  final DeviceContext ctxB;
  final ProtectionDomain pdA;
  final ProtectionDomain pdB;
  final CompletionQueue cqA;
  final CompletionQueue cqB;
  final QueuePair qpA;
  final QueuePair qpB;
  private final List<AutoCloseable> extras = new ArrayList<>();

  LoopbackPair(DeviceOptions options) {
    ctxA = RdmaProviders.firstDevice(LoopbackProvider.NAME).open(options);
    ctxB = RdmaProviders.firstDevice(LoopbackProvider.NAME).open(options);
    pdA = ctxA.allocateProtectionDomain();
    pdB = ctxB.allocateProtectionDomain();
    cqA = ctxA.createCompletionQueue(256);
    cqB = ctxB.createCompletionQueue(256);
    qpA = pdA.createQueuePair(QueuePairAttributes.of(cqA, 16, 2));
    qpB = pdB.createQueuePair(QueuePairAttributes.of(cqB, 16, 2));
  }

  /** A pair whose QPs are connected (both RTS), allowing remote WRITE and READ both ways. */
  static LoopbackPair connected() {
    LoopbackPair p = new LoopbackPair(new DeviceOptions());
    VerbsTestRig.connect(p.qpA, ALL, p.qpB, ALL);
    return p;
  }

  MemoryRegion register(ProtectionDomain pd, int size, int access) {
    return track(pd.registerMemory(ByteBuffer.allocateDirect(size), access));
  }

  <T extends AutoCloseable> T track(T c) {
    extras.add(c);
    return c;
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
