package io.srdma.verbs.loopback;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.QpState;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import io.srdma.verbs.internal.LocalAccess;
import io.srdma.verbs.internal.RemoteAccess;
import java.nio.ByteBuffer;

/**
 * The loopback RNIC of one queue pair: executes a send work request on the posting thread. Local
 * SGEs are checked as the requester's RNIC does (lkey, PD, rights, bounds); a remote access is
 * checked by the same {@link RemoteAccess} as the soft provider's responder, against the peer's key
 * table: rkey exists, PD of the region or window equals the peer QP's, a type-2 window is bound to
 * the peer QP, the rights allow the operation, and {@code [addr, addr+len)} lies inside the window
 * and the region (unsigned, overflow-safe). A refused access completes with REM_ACCESS_ERR and both
 * QPs enter ERROR; nothing is copied.
 *
 * <p>Bytes move in chunks of at most {@link #CHUNK}, each under the window's and the region's
 * access locks (the locks LOCAL_INV, window close and deregistration take) after re-checking that
 * the access is still valid: once those return, no further byte of that key is moved.
 *
 * <p>Confined to the thread holding the queue pair's send lock; allocates nothing.
 */
final class WorkExecutor {
  /** {@link #execute} result: done (completed, successfully or not). */
  static final int DONE = 0;

  /** {@link #execute} result: the peer has no receive posted; retry later. */
  static final int STALL_RNR = 1;

  /** {@link #execute} result: the peer is not in RTR yet; retry later. */
  static final int STALL_NOT_READY = 2;

  /** Largest copy made under the access locks at once. */
  static final int CHUNK = 64 * 1024;

  private final LoopbackQueuePair qp;
  private final LoopbackMemoryRegion[] local;
  private final int[] localOffsets;
  private final RemoteAccess<LoopbackProtectionDomain, LoopbackMemoryRegion, LoopbackMemoryWindow>
      access = new RemoteAccess<>(LoopbackMemoryRegion.class, LoopbackMemoryWindow.class);

  WorkExecutor(LoopbackQueuePair qp, int maxSge) {
    this.qp = qp;
    this.local = new LoopbackMemoryRegion[maxSge];
    this.localOffsets = new int[maxSge];
  }

  /** Completes {@code wr} with WR_FLUSH_ERR. */
  void flush(SendWorkRequest wr) {
    complete(wr, WcStatus.WR_FLUSH_ERR, 0);
  }

  /** Reports {@code wr}'s completion: errors always, successes when signaled. */
  void complete(SendWorkRequest wr, WcStatus status, int byteLength) {
    if (status != WcStatus.SUCCESS || wr.signaled()) {
      qp.sendCq()
          .push(wr.wrId(), status, wr.opcode().completionOpcode(), byteLength, false, 0, qp.qpn());
    }
  }

  /**
   * Executes {@code wr}.
   *
   * @return {@link #DONE}, or a stall reason (nothing was changed; retry later)
   */
  int execute(SendWorkRequest wr) {
    WrOpcode op = wr.opcode();
    if (op == WrOpcode.BIND_MW) {
      return localDone(wr, bind(wr));
    }
    if (op == WrOpcode.LOCAL_INV) {
      return localDone(wr, invalidate(wr.invalidateRkey()));
    }
    ScatterGatherList sgl = wr.sgl();
    int rights = op == WrOpcode.RDMA_READ ? AccessFlags.LOCAL_WRITE : 0;
    for (int k = 0; k < sgl.count(); k++) {
      LoopbackMemoryRegion mr = qp.resolveLocal(sgl.address(k), sgl.length(k), sgl.lkey(k), rights);
      if (mr == null) {
        clearLocal(k);
        return localDone(wr, WcStatus.LOC_PROT_ERR);
      }
      local[k] = mr;
      localOffsets[k] = (int) mr.offsetOf(sgl.address(k), sgl.length(k));
    }
    try {
      LoopbackQueuePair peer = qp.peer();
      QpState ps = peer.state();
      if (ps == QpState.RESET || ps == QpState.INIT) {
        return STALL_NOT_READY;
      }
      if (ps == QpState.ERROR || peer.isClosed() || peer.peer() != qp) {
        // no responder answers: a real requester retries until its budget runs out
        return localDone(wr, WcStatus.RETRY_EXC_ERR);
      }
      int total = (int) sgl.totalLength();
      return switch (op) {
        case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(wr, peer, total);
        case SEND, SEND_WITH_IMM -> send(wr, peer, total);
        case RDMA_READ -> read(wr, peer, total);
        case BIND_MW, LOCAL_INV -> throw new AssertionError(op);
      };
    } finally {
      clearLocal(sgl.count());
      access.clear();
    }
  }

  private void clearLocal(int n) {
    for (int k = 0; k < n; k++) {
      local[k] = null;
    }
  }

  /** Completes a request that failed or finished locally; a failure moves the QP to ERROR. */
  private int localDone(SendWorkRequest wr, WcStatus status) {
    complete(wr, status, 0);
    if (status != WcStatus.SUCCESS) {
      qp.fail();
    }
    return DONE;
  }

  /** The responder refused: the peer's QP enters ERROR, then ours. */
  private int remoteError(SendWorkRequest wr, LoopbackQueuePair peer, WcStatus status) {
    peer.fail();
    complete(wr, status, 0);
    qp.fail();
    return DONE;
  }

  private int write(SendWorkRequest wr, LoopbackQueuePair peer, int total) {
    boolean withImm = wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
    if (!resolveRemote(peer, wr, total, AccessFlags.REMOTE_WRITE)) {
      return remoteError(wr, peer, WcStatus.REM_ACCESS_ERR);
    }
    LoopbackReceiveQueue rq = peer.receiveQueue();
    long receive = -1;
    if (withImm) {
      receive = rq.head();
      if (receive < 0) {
        return STALL_RNR;
      }
    }
    if (total > 0 && !gatherIntoTarget(wr.sgl())) {
      // revoked mid-way: a pending receive stays posted and is flushed as the peer enters ERROR
      return remoteError(wr, peer, WcStatus.REM_ACCESS_ERR);
    }
    if (withImm) {
      rq.complete(
          receive, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, total, true, wr.immData());
    }
    complete(wr, WcStatus.SUCCESS, 0);
    return DONE;
  }

  private int read(SendWorkRequest wr, LoopbackQueuePair peer, int total) {
    if (!resolveRemote(peer, wr, total, AccessFlags.REMOTE_READ)) {
      return remoteError(wr, peer, WcStatus.REM_ACCESS_ERR);
    }
    if (total > 0 && !scatterFromTarget(wr.sgl())) {
      return remoteError(wr, peer, WcStatus.REM_ACCESS_ERR);
    }
    complete(wr, WcStatus.SUCCESS, total);
    return DONE;
  }

  private int send(SendWorkRequest wr, LoopbackQueuePair peer, int total) {
    LoopbackReceiveQueue rq = peer.receiveQueue();
    long receive = rq.head();
    if (receive < 0) {
      return STALL_RNR;
    }
    int slot = rq.slot(receive);
    long room = 0;
    for (int k = 0; k < rq.sges(slot); k++) {
      room += rq.length(slot, k);
      if (peer.resolveLocal(
              rq.address(slot, k), rq.length(slot, k), rq.lkey(slot, k), AccessFlags.LOCAL_WRITE)
          == null) {
        rq.complete(receive, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
        return remoteError(wr, peer, WcStatus.REM_OP_ERR);
      }
    }
    if (total > room) {
      rq.complete(receive, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0);
      return remoteError(wr, peer, WcStatus.REM_INV_REQ_ERR);
    }
    ScatterGatherList sgl = wr.sgl();
    int srcSge = 0;
    int srcDone = 0;
    int left = total;
    for (int k = 0; k < rq.sges(slot) && left > 0; k++) {
      int n = Math.min(left, rq.length(slot, k));
      LoopbackMemoryRegion mr =
          peer.resolveLocal(rq.address(slot, k), n, rq.lkey(slot, k), AccessFlags.LOCAL_WRITE);
      if (mr == null) {
        rq.complete(receive, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
        return remoteError(wr, peer, WcStatus.REM_OP_ERR);
      }
      int dst = (int) mr.offsetOf(rq.address(slot, k), n);
      int placed = 0;
      while (placed < n) {
        while (srcDone == sgl.length(srcSge)) {
          srcSge++;
          srcDone = 0;
        }
        int m = Math.min(Math.min(n - placed, sgl.length(srcSge) - srcDone), CHUNK);
        if (!move(
            local[srcSge].memory(),
            localOffsets[srcSge] + srcDone,
            mr,
            dst + placed,
            m,
            null,
            null,
            mr)) {
          // the receive buffer was deregistered under the SEND
          rq.complete(receive, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
          return remoteError(wr, peer, WcStatus.REM_OP_ERR);
        }
        placed += m;
        srcDone += m;
      }
      left -= n;
    }
    boolean withImm = wr.opcode() == WrOpcode.SEND_WITH_IMM;
    rq.complete(receive, WcStatus.SUCCESS, WcOpcode.RECV, total, withImm, wr.immData());
    complete(wr, WcStatus.SUCCESS, 0);
    return DONE;
  }

  /** WRITE: the local SGEs, in order, into the resolved target range. */
  private boolean gatherIntoTarget(ScatterGatherList sgl) {
    LoopbackMemoryRegion target = access.region();
    int dst = (int) access.offset();
    for (int k = 0; k < sgl.count(); k++) {
      ByteBuffer src = local[k].memory();
      int from = localOffsets[k];
      int len = sgl.length(k);
      while (len > 0) {
        int n = Math.min(len, CHUNK);
        if (!move(src, from, target, dst, n, access.window(), access.binding(), target)) {
          return false;
        }
        from += n;
        dst += n;
        len -= n;
      }
    }
    return true;
  }

  /** READ: the resolved target range into the local SGEs, in order. */
  private boolean scatterFromTarget(ScatterGatherList sgl) {
    LoopbackMemoryRegion target = access.region();
    int from = (int) access.offset();
    for (int k = 0; k < sgl.count(); k++) {
      ByteBuffer dst = local[k].memory();
      int to = localOffsets[k];
      int len = sgl.length(k);
      while (len > 0) {
        int n = Math.min(len, CHUNK);
        if (!moveOut(target, from, dst, to, n)) {
          return false;
        }
        from += n;
        to += n;
        len -= n;
      }
    }
    return true;
  }

  /**
   * One chunk into {@code dst} under the access locks (window's, then region's), after checking
   * that the access resolved before is still valid.
   */
  private static boolean move(
      ByteBuffer src,
      int srcOffset,
      LoopbackMemoryRegion dst,
      int dstOffset,
      int length,
      LoopbackMemoryWindow mw,
      LoopbackMemoryWindow.Binding<LoopbackMemoryRegion> b,
      LoopbackMemoryRegion locked) {
    if (mw == null) {
      synchronized (locked.accessLock()) {
        if (locked.isClosed()) {
          return false;
        }
        dst.memory().put(dstOffset, src, srcOffset, length);
        return true;
      }
    }
    synchronized (mw.accessLock()) {
      synchronized (locked.accessLock()) {
        if (locked.isClosed() || mw.binding() != b) {
          return false;
        }
        dst.memory().put(dstOffset, src, srcOffset, length);
        return true;
      }
    }
  }

  /** One chunk of the target out into {@code dst}, under the access locks. */
  private boolean moveOut(
      LoopbackMemoryRegion src, int srcOffset, ByteBuffer dst, int dstOffset, int length) {
    LoopbackMemoryWindow mw = access.window();
    if (mw == null) {
      synchronized (src.accessLock()) {
        if (src.isClosed()) {
          return false;
        }
        dst.put(dstOffset, src.memory(), srcOffset, length);
        return true;
      }
    }
    synchronized (mw.accessLock()) {
      synchronized (src.accessLock()) {
        if (src.isClosed() || mw.binding() != access.binding()) {
          return false;
        }
        dst.put(dstOffset, src.memory(), srcOffset, length);
        return true;
      }
    }
  }

  /**
   * The responder's access check ({@link RemoteAccess}, the soft provider's too), against the peer
   * and its context's rkeys; on success {@link #access} names the bytes.
   */
  private boolean resolveRemote(LoopbackQueuePair peer, SendWorkRequest wr, int length, int right) {
    return access.resolve(
        peer.loopbackContext().rkeys(), peer, wr.rkey(), wr.remoteAddress(), length, right);
  }

  private WcStatus bind(SendWorkRequest wr) {
    LoopbackMemoryWindow mw = (LoopbackMemoryWindow) wr.window();
    LoopbackMemoryRegion mr = (LoopbackMemoryRegion) wr.bindRegion();
    return mw.bind(mr, qp.pd(), wr.bindAddress(), wr.bindLength(), wr.bindAccess(), qp)
        ? WcStatus.SUCCESS
        : WcStatus.MW_BIND_ERR;
  }

  private WcStatus invalidate(int rkey) {
    return LocalAccess.invalidate(
            qp.loopbackContext().rkeys(), LoopbackMemoryWindow.class, qp.pd(), qp, rkey)
        ? WcStatus.SUCCESS
        : WcStatus.LOC_QP_OP_ERR;
  }
}
