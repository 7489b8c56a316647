package io.srdma.verbs.ibv;

import com.kenai.jffi.LastError;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.internal.CriticalDowncalls;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.LoggerFactory;

/**
 * The verbs libibverbs declares {@code static inline} in verbs.h ({@code ibv_post_send}, {@code
 * ibv_post_recv}, {@code ibv_post_srq_recv}, {@code ibv_poll_cq}, {@code ibv_alloc_mw}, {@code
 * ibv_dealloc_mw}): they are no exported symbols but calls through {@code context->ops}, so this
 * reads those function pointers once per opened device.
 *
 * <p>Where the JVM offers downcalls (Java 22+, or Java 17 started with {@code --add-modules
 * jdk.incubator.foreign --enable-native-access=ALL-UNNAMED}) the per-message four (post_send,
 * post_recv, post_srq_recv, poll_cq) are bound, once per device, as critical foreign-function
 * downcalls ({@link CriticalDowncalls}: no thread-state transition per call); they are short, never
 * block and never call back (rxe's post_send makes one {@code write()} as its doorbell). alloc_mw
 * and dealloc_mw, and all six elsewhere, with {@code -D}{@value #PROPERTY}{@code =jnr} or where
 * binding failed, go through jffi. {@link #binding()} names which, for the doctor; a binding
 * refused where downcalls were possible is logged once at info. Immutable and thread-safe
 * (libibverbs' own locking covers concurrent posts).
 */
final class OpsTable {
  /** System property: {@code jnr} keeps the per-message calls on jffi where downcalls work too. */
  static final String PROPERTY = "srdma.ibv.calls";

  private static final CriticalDowncalls DOWNCALLS = CriticalDowncalls.unlessTurnedOff(PROPERTY);

  /** Why a device's ops could not be bound (the first such failure), or null. */
  private static final AtomicReference<String> BIND_FAILURE = new AtomicReference<>();

  private static final AtomicBoolean LOGGED = new AtomicBoolean();

  private final long postSend;
  private final long postRecv;
  private final long postSrqRecv;
  private final long pollCq;
  private final long allocMw;
  private final long deallocMw;
  // the downcalls of this device's pointers, all four or none (null: through jffi)
  private final MethodHandle postSendCall;
  private final MethodHandle postRecvCall;
  private final MethodHandle postSrqRecvCall;
  private final MethodHandle pollCqCall;

  OpsTable(long context) {
    postSend = Native.getLong(context + Structs.Context.OPS_POST_SEND);
    postRecv = Native.getLong(context + Structs.Context.OPS_POST_RECV);
    postSrqRecv = Native.getLong(context + Structs.Context.OPS_POST_SRQ_RECV);
    pollCq = Native.getLong(context + Structs.Context.OPS_POLL_CQ);
    allocMw = Native.getLong(context + Structs.Context.OPS_ALLOC_MW);
    deallocMw = Native.getLong(context + Structs.Context.OPS_DEALLOC_MW);
    if (postSend == 0 || postRecv == 0 || pollCq == 0) {
      throw new VerbsException(
          VerbsException.Reason.PROVIDER_UNAVAILABLE,
          "open_device",
          "the device's ops table has no post_send/post_recv/poll_cq: libibverbs' struct"
              + " ibv_context does not match this provider's layout");
    }
    MethodHandle[] h = bind(postSend, postRecv, postSrqRecv, pollCq);
    postSendCall = h[0];
    postRecvCall = h[1];
    postSrqRecvCall = h[2];
    pollCqCall = h[3];
  }

  /**
   * How the per-message calls are made: {@link CriticalDowncalls#kind()} ({@code FFM downcalls}, on
   * Java 17 {@code FFM downcalls (Java 17 incubator)}), or {@code jffi, not downcalls: <why>} (the
   * Java version or options, the property, or the first device whose binding failed).
   */
  static String binding() {
    String why = DOWNCALLS.unavailable();
    if (why == null) {
      why = BIND_FAILURE.get();
    }
    return why == null ? CriticalDowncalls.kind() : "jffi, not downcalls: " + why;
  }

  /** The four as downcalls, or four nulls (said once at info where downcalls were possible). */
  private static MethodHandle[] bind(long send, long recv, long srqRecv, long poll) {
    MethodHandle[] h = new MethodHandle[4];
    if (DOWNCALLS.available()) {
      try {
        h[0] = DOWNCALLS.bind(send, int.class, long.class, long.class, long.class);
        h[1] = DOWNCALLS.bind(recv, int.class, long.class, long.class, long.class);
        if (srqRecv != 0) {
          h[2] = DOWNCALLS.bind(srqRecv, int.class, long.class, long.class, long.class);
        }
        h[3] = DOWNCALLS.bind(poll, int.class, long.class, int.class, long.class);
        return h;
      } catch (IllegalArgumentException e) {
        BIND_FAILURE.compareAndSet(null, e.getMessage());
        h = new MethodHandle[4];
      }
    }
    if (CriticalDowncalls.possibleHere() && LOGGED.compareAndSet(false, true)) {
      LoggerFactory.getLogger(OpsTable.class).info("libibverbs' per-message calls: {}", binding());
    }
    return h;
  }

  /** True when this device's per-message calls are the downcalls. */
  boolean downcalls() {
    return postSendCall != null;
  }

  /** {@code ops.post_send(qp, wr, &bad_wr)}: 0 or an errno. */
  int postSend(long qp, long wr, long badWr) {
    if (postSendCall != null) {
      try {
        return (int) postSendCall.invokeExact(qp, wr, badWr);
      } catch (Throwable t) {
        throw downcallFailed(t);
      }
    }
    return (int) Native.INVOKER.invokeN3(Native.PTR3_INT, postSend, qp, wr, badWr);
  }

  /** {@code ops.post_recv(qp, wr, &bad_wr)}: 0 or an errno. */
  int postRecv(long qp, long wr, long badWr) {
    if (postRecvCall != null) {
      try {
        return (int) postRecvCall.invokeExact(qp, wr, badWr);
      } catch (Throwable t) {
        throw downcallFailed(t);
      }
    }
    return (int) Native.INVOKER.invokeN3(Native.PTR3_INT, postRecv, qp, wr, badWr);
  }

  /** True when the device can post to shared receive queues. */
  boolean hasPostSrqRecv() {
    return postSrqRecv != 0;
  }

  /** {@code ops.post_srq_recv(srq, wr, &bad_wr)}: 0 or an errno. */
  int postSrqRecv(long srq, long wr, long badWr) {
    if (postSrqRecvCall != null) {
      try {
        return (int) postSrqRecvCall.invokeExact(srq, wr, badWr);
      } catch (Throwable t) {
        throw downcallFailed(t);
      }
    }
    return (int) Native.INVOKER.invokeN3(Native.PTR3_INT, postSrqRecv, srq, wr, badWr);
  }

  /** {@code ops.poll_cq(cq, n, wc)}: completions taken, or negative on error. */
  int pollCq(long cq, int max, long wc) {
    if (pollCqCall != null) {
      try {
        return (int) pollCqCall.invokeExact(cq, max, wc);
      } catch (Throwable t) {
        throw downcallFailed(t);
      }
    }
    return (int) Native.INVOKER.invokeN3(Native.PTR_INT_PTR_INT, pollCq, cq, max, wc);
  }

  /** {@code ops.alloc_mw(pd, IBV_MW_TYPE_2)}: the window, or throws with errno. */
  long allocMwType2(long pd) {
    if (allocMw == 0) {
      throw new VerbsException(
          VerbsException.Reason.NOT_SUPPORTED, "alloc_mw", "the device has no memory windows");
    }
    long mw = Native.INVOKER.invokeN2(Native.PTR_INT_PTR, allocMw, pd, Structs.Mw.TYPE_2);
    if (mw == 0) {
      int errno = LastError.getInstance().get();
      throw Errors.of("alloc_mw", errno == 0 ? Errors.EOPNOTSUPP : errno, "type-2 window");
    }
    return mw;
  }

  /** {@code ops.dealloc_mw(mw)}: 0 or an errno. */
  int deallocMw(long mw) {
    return (int) Native.INVOKER.invokeN1(Native.PTR_INT, deallocMw, mw);
  }

  /** A downcall declares Throwable; it throws nothing checked (an Error is passed on). */
  private static RuntimeException downcallFailed(Throwable t) {
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new IllegalStateException("a libibverbs downcall failed", t);
  }
}
