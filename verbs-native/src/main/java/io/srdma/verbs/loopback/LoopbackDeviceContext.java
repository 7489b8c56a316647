package io.srdma.verbs.loopback;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.internal.KeyTable;
import io.srdma.verbs.internal.LiveChildren;
import java.security.SecureRandom;

/**
 * An open loopback device: key tables (random lkeys, rkeys and QP numbers), no threads, no sockets.
 * Requests to its queue pairs are executed by the peer's posting thread. Thread-safe.
 */
final class LoopbackDeviceContext implements DeviceContext {
  static final String PROTECTION_DOMAIN = "protection domain";
  static final String COMPLETION_QUEUE = "completion queue";
  static final long MAX_MESSAGE_SIZE = 1L << 30;
  static final int MAX_QP_WR = 16 * 1024;
  static final int MAX_SGE = 16;
  static final int MAX_CQE = 1 << 20;

  private final LoopbackDevice device;
  private final DeviceOptions options;
  private final SecureRandom random = new SecureRandom();
  private final KeyTable<Object> lkeys = new KeyTable<>(random, 0xFFFFFFFF);
  private final KeyTable<Object> rkeys = new KeyTable<>(random, 0xFFFFFFFF);
  private final KeyTable<LoopbackQueuePair> qps = new KeyTable<>(random, 0xFFFFFF);
  private final LiveChildren children = new LiveChildren();
  private boolean closed;

  LoopbackDeviceContext(LoopbackDevice device, DeviceOptions options) {
    this.device = device;
    this.options = options.conclude();
  }

  DeviceOptions options() {
    return options;
  }

  KeyTable<Object> lkeys() {
    return lkeys;
  }

  KeyTable<Object> rkeys() {
    return rkeys;
  }

  KeyTable<LoopbackQueuePair> qps() {
    return qps;
  }

  LiveChildren children() {
    return children;
  }

  /** A random, page-aligned, non-zero base address for a new region (no layout is revealed). */
  long randomAddress() {
    return 0x0000_1000_0000_0000L | (random.nextLong() & 0x0000_0FFF_FFFF_F000L);
  }

  int randomPsn() {
    return random.nextInt() & 0xFFFFFF;
  }

  LoopbackCompletionQueue ownCq(CompletionQueue cq, String verb) {
    if (!(cq instanceof LoopbackCompletionQueue own) || own.loopbackContext() != this) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "completion queue belongs to another device");
    }
    if (own.isClosed()) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "completion queue is closed");
    }
    return own;
  }

  @Override
  public Device device() {
    return device;
  }

  @Override
  public DeviceAttributes queryDevice() {
    return new DeviceAttributes(
        MAX_MESSAGE_SIZE, 1 << 20, 1 << 24, 1 << 24, MAX_QP_WR, MAX_SGE, MAX_CQE, true, true, true);
  }

  @Override
  public synchronized ProtectionDomain allocateProtectionDomain() {
    requireOpen("alloc_pd");
    LoopbackProtectionDomain pd = new LoopbackProtectionDomain(this);
    children.add(PROTECTION_DOMAIN);
    return pd;
  }

  @Override
  public synchronized CompletionQueue createCompletionQueue(int capacity) {
    requireOpen("create_cq");
    if (capacity < 1 || capacity > MAX_CQE) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "create_cq", "capacity must be 1.." + MAX_CQE);
    }
    // built first: a CQ whose construction fails (no descriptor left) is no child to wait for
    LoopbackCompletionQueue cq = new LoopbackCompletionQueue(this, capacity);
    children.add(COMPLETION_QUEUE);
    return cq;
  }

  private void requireOpen(String verb) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "device context is closed");
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    children.requireNone("close_device", "device context");
    closed = true;
  }

  @Override
  public String toString() {
    return "LoopbackDeviceContext{" + device.name() + "}";
  }
}
