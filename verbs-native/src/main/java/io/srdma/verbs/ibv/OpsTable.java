package io.srdma.verbs.ibv;

import com.kenai.jffi.LastError;
import io.srdma.verbs.VerbsException;

/**
 * The verbs libibverbs declares {@code static inline} in verbs.h ({@code ibv_post_send}, {@code
 * ibv_post_recv}, {@code ibv_post_srq_recv}, {@code ibv_poll_cq}, {@code ibv_alloc_mw}, {@code
 * ibv_dealloc_mw}): they are no exported symbols but calls through {@code context->ops}, so this
 * reads those function pointers once per opened device and calls them through jffi.
 */
final class OpsTable {
  private final long postSend;
  private final long postRecv;
  private final long postSrqRecv;
  private final long pollCq;
  private final long allocMw;
  private final long deallocMw;

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
  }

  /** {@code ops.post_send(qp, wr, &bad_wr)}: 0 or an errno. */
  int postSend(long qp, long wr, long badWr) {
    return (int) Native.INVOKER.invokeN3(Native.PTR3_INT, postSend, qp, wr, badWr);
  }

  /** {@code ops.post_recv(qp, wr, &bad_wr)}: 0 or an errno. */
  int postRecv(long qp, long wr, long badWr) {
    return (int) Native.INVOKER.invokeN3(Native.PTR3_INT, postRecv, qp, wr, badWr);
  }

  /** True when the device can post to shared receive queues. */
  boolean hasPostSrqRecv() {
    return postSrqRecv != 0;
  }

  /** {@code ops.post_srq_recv(srq, wr, &bad_wr)}: 0 or an errno. */
  int postSrqRecv(long srq, long wr, long badWr) {
    return (int) Native.INVOKER.invokeN3(Native.PTR3_INT, postSrqRecv, srq, wr, badWr);
  }

  /** {@code ops.poll_cq(cq, n, wc)}: completions taken, or negative on error. */
  int pollCq(long cq, int max, long wc) {
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
}
