package io.srdma.verbs.ibv;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A libibverbs completion queue ({@code struct ibv_cq}), polled through {@code ops.poll_cq} into
 * one off-heap {@code ibv_wc} array allocated at creation: polling allocates nothing.
 */
final class IbvCompletionQueue implements CompletionQueue {
  /** Completions taken per native call at most. */
  private static final int BATCH = 32;

  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
  private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
  private static final long MAX_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

  private final IbvDeviceContext context;
  private final long cq;
  private volatile int capacity;
  private final long wcs;
  private volatile IbvQueuePair[] queuePairs = new IbvQueuePair[0];
  private int users;
  private boolean closed;

  IbvCompletionQueue(IbvDeviceContext context, long cq, int capacity) {
    this.context = context;
    this.cq = cq;
    this.capacity = capacity;
    this.wcs = Native.allocate((long) BATCH * Structs.Wc.SIZE);
  }

  long handle() {
    return cq;
  }

  IbvDeviceContext ibvContext() {
    return context;
  }

  /** A QP starts using this CQ; its send completions are counted back to it. */
  synchronized void attach(IbvQueuePair qp) {
    users++;
    IbvQueuePair[] now = Arrays.copyOf(queuePairs, queuePairs.length + 1);
    now[now.length - 1] = qp;
    queuePairs = now;
  }

  synchronized void detach(IbvQueuePair qp) {
    users--;
    queuePairs = Arrays.stream(queuePairs).filter(q -> q != qp).toArray(IbvQueuePair[]::new);
  }

  @Override
  public int capacity() {
    return capacity;
  }

  /**
   * {@code ibv_resize_cq}, excluding pollers (poll holds this monitor). The provider keeps the
   * queued completions and refuses (EINVAL) a size below them; it may round the size up (rxe: to
   * 2^n − 1), {@link #capacity()} reports what was asked.
   */
  @Override
  public synchronized void resize(int newCapacity) {
    if (closed) {
      throw new VerbsException(
          VerbsException.Reason.CLOSED, "resize_cq", "completion queue is closed");
    }
    int max = context.maxCqe();
    if (newCapacity < 1 || newCapacity > max) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "resize_cq",
          "capacity " + newCapacity + " outside 1.." + max);
    }
    int rc = Native.lib().ibv_resize_cq(cq, newCapacity);
    if (rc != 0) {
      // EINVAL also when fewer than the completions queued now; some providers return -errno
      throw Errors.of("resize_cq", Math.abs(rc), "capacity " + capacity + " -> " + newCapacity);
    }
    LayoutProbe.require(
        Native.getInt(cq + Structs.Cq.CQE) >= newCapacity, "ibv_cq", "cq->cqe after resize");
    capacity = newCapacity;
  }

  @Override
  public synchronized int poll(WorkCompletion[] out) {
    if (closed) {
      throw new VerbsException(
          VerbsException.Reason.CLOSED, "poll_cq", "completion queue is closed");
    }
    int max = Math.min(out.length, BATCH);
    int n = context.ops().pollCq(cq, max, wcs);
    if (n < 0) {
      throw new VerbsException(
          VerbsException.Reason.IO, "poll_cq", "ops.poll_cq returned " + n + " (CQ overrun?)");
    }
    for (int i = 0; i < n; i++) {
      decode(wcs + (long) i * Structs.Wc.SIZE, out[i]);
    }
    return n;
  }

  private void decode(long wc, WorkCompletion into) {
    long wrId = Native.getLong(wc + Structs.Wc.WR_ID);
    WcStatus status = WcStatus.fromCode(Native.getInt(wc + Structs.Wc.STATUS));
    int opcodeCode = Native.getInt(wc + Structs.Wc.OPCODE);
    int qpNum = Native.getInt(wc + Structs.Wc.QP_NUM);
    boolean hasImm = (Native.getInt(wc + Structs.Wc.WC_FLAGS) & Structs.Wc.WITH_IMM) != 0;
    int imm = Native.getInt(wc + Structs.Wc.IMM_DATA);
    if (LITTLE_ENDIAN) {
      imm = Integer.reverseBytes(imm);
    }
    WcOpcode opcode = opcode(opcodeCode);
    into.set(
        wrId,
        status,
        opcode,
        Native.getInt(wc + Structs.Wc.BYTE_LEN),
        hasImm,
        hasImm ? imm : 0,
        qpNum);
    if (opcodeCode < WcOpcode.RECV.code() || status != WcStatus.SUCCESS) {
      // Error completions carry no valid opcode; count them back only on the send side's QP.
      IbvQueuePair[] qps = queuePairs;
      for (IbvQueuePair qp : qps) {
        if (qp.qpn() == qpNum) {
          qp.sendCompleted(opcodeCode < WcOpcode.RECV.code(), status);
          break;
        }
      }
    }
  }

  private static WcOpcode opcode(int code) {
    return switch (code) {
      case 0 -> WcOpcode.SEND;
      case 1 -> WcOpcode.RDMA_WRITE;
      case 2 -> WcOpcode.RDMA_READ;
      case 5 -> WcOpcode.BIND_MW;
      case 6 -> WcOpcode.LOCAL_INV;
      case 129 -> WcOpcode.RECV_RDMA_WITH_IMM;
      default -> WcOpcode.RECV;
    };
  }

  @Override
  public int await(WorkCompletion[] out, Duration timeout) {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    long park = 1_000;
    while (true) {
      int n = poll(out);
      if (n > 0) {
        return n;
      }
      long now = System.nanoTime();
      if (now - deadline >= 0) {
        return 0;
      }
      if (now - start < SPIN_NANOS) {
        Thread.onSpinWait();
      } else {
        LockSupport.parkNanos(Math.min(park, deadline - now));
        park = Math.min(MAX_PARK_NANOS, park * 2);
      }
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      if (users > 0) {
        throw new VerbsException(
            VerbsException.Reason.BUSY,
            "destroy_cq",
            "completion queue is used by " + users + " queue pair(s); close them first");
      }
      int rc = Native.lib().ibv_destroy_cq(cq);
      if (rc != 0) {
        throw Errors.of("destroy_cq", rc, "completion queue");
      }
      closed = true;
      Native.free(wcs);
    }
    context.children().remove("completion queue");
  }
}
