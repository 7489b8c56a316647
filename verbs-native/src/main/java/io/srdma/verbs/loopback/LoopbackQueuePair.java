package io.srdma.verbs.loopback;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import io.srdma.verbs.internal.LocalAccess;
import io.srdma.verbs.internal.RemoteAccess;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An RC queue pair of the loopback provider. Its peer is another loopback queue pair of this JVM,
 * found through {@link LoopbackRegistry} by the id in the peer's {@link ConnectionInfo}. {@code
 * postSend} executes each request on the calling thread ({@link WorkExecutor}): access checks as an
 * RNIC's responder makes them, then the copy, then the completions.
 *
 * <p>A request that must wait for the peer (no receive posted, peer not in RTR yet) stays in {@link
 * PendingSends} with the requests posted behind it; it is retried when the peer posts a receive (to
 * its own queue or to the shared receive queue it takes its receives from) or reaches RTR, and
 * fails (RNR_RETRY_EXC_ERR, RETRY_EXC_ERR) once its deadline passes, noticed by polls of the send
 * CQ or by the next post.
 *
 * <p>Locking: the send lock serialises this QP's requests; another thread never blocks on it (peers
 * and CQs use {@link #kick}, which leaves the work to the holder when the lock is taken). While
 * holding it a thread takes only leaf locks: the peer's receive queue (and the shared ring it
 * claims from), memory access locks.
 *
 * <p>Thread-safe.
 */
final class LoopbackQueuePair implements QueuePair, RemoteAccess.Target<LoopbackProtectionDomain> {
  private final LoopbackProtectionDomain pd;
  private final LoopbackDeviceContext ctx;
  private final LoopbackCompletionQueue sendCq;
  private final LoopbackCompletionQueue recvCq;
  private final QueuePairAttributes attributes;
  private final int qpn;
  private final int startPsn;
  private final long id;
  private final LoopbackSharedReceiveQueue srq;
  private final LoopbackReceiveQueue receiveQueue;
  private final PendingSends pending;
  private final WorkExecutor executor;
  private final Object stateLock = new Object();
  private final ReentrantLock sendLock = new ReentrantLock();
  private volatile QpState state = QpState.RESET;
  private volatile int access;
  private volatile LoopbackQueuePair peer;
  private volatile boolean workPending;
  private volatile boolean stalled;
  private volatile boolean closed;

  LoopbackQueuePair(
      LoopbackProtectionDomain pd,
      LoopbackCompletionQueue sendCq,
      LoopbackCompletionQueue recvCq,
      QueuePairAttributes attributes,
      LoopbackSharedReceiveQueue srq) {
    this.pd = pd;
    this.ctx = pd.loopbackContext();
    this.sendCq = sendCq;
    this.recvCq = recvCq;
    this.attributes = attributes;
    this.qpn = ctx.qps().allocate(this);
    this.startPsn = ctx.randomPsn();
    this.srq = srq;
    this.receiveQueue =
        srq == null
            ? LoopbackReceiveQueue.own(recvCq, qpn, attributes.maxRecvWr(), attributes.maxRecvSge())
            : LoopbackReceiveQueue.claiming(srq.ring(), recvCq, qpn);
    this.pending = new PendingSends(attributes.maxSendWr(), attributes.maxSendSge());
    this.executor = new WorkExecutor(this, attributes.maxSendSge());
    this.id = LoopbackRegistry.register(this);
    sendCq.users().add(LoopbackProtectionDomain.QUEUE_PAIR);
    recvCq.users().add(LoopbackProtectionDomain.QUEUE_PAIR);
  }

  @Override
  public LoopbackProtectionDomain pd() {
    return pd;
  }

  LoopbackDeviceContext loopbackContext() {
    return ctx;
  }

  @Override
  public int accessFlags() {
    return access;
  }

  LoopbackQueuePair peer() {
    return peer;
  }

  LoopbackReceiveQueue receiveQueue() {
    return receiveQueue;
  }

  LoopbackCompletionQueue sendCq() {
    return sendCq;
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public int qpn() {
    return qpn;
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public QpState state() {
    return state;
  }

  @Override
  public ConnectionInfo localInfo() {
    return new ConnectionInfo(qpn, startPsn, LoopbackRegistry.address(id));
  }

  @Override
  public void init(int qpAccess) {
    AccessFlags.validate("modify_qp", qpAccess);
    synchronized (stateLock) {
      requireState("modify_qp(INIT)", QpState.RESET);
      this.access = qpAccess;
      state = QpState.INIT;
    }
  }

  @Override
  public void readyToReceive(ConnectionInfo remote) {
    LoopbackQueuePair found = LoopbackRegistry.resolve(remote, "modify_qp(RTR)");
    synchronized (stateLock) {
      requireState("modify_qp(RTR)", QpState.INIT);
      this.peer = found;
      state = QpState.RTR;
    }
    // requests the peer posted before we were ready may proceed now
    found.kickIfStalled();
  }

  @Override
  public void readyToSend() {
    synchronized (stateLock) {
      requireState("modify_qp(RTS)", QpState.RTR);
      LoopbackQueuePair p = peer;
      if (p.isClosed()) {
        throw new VerbsException(
            VerbsException.Reason.IO,
            "modify_qp(RTS)",
            "peer queue pair 0x" + Integer.toHexString(p.qpn()) + " was closed");
      }
      state = QpState.RTS;
    }
  }

  @Override
  public void toError() {
    fail();
  }

  /** Enters ERROR: posted receives and waiting sends complete with WR_FLUSH_ERR. */
  void fail() {
    synchronized (stateLock) {
      if (state == QpState.ERROR) {
        return;
      }
      state = QpState.ERROR;
    }
    receiveQueue.flush();
    kick();
    LoopbackQueuePair p = peer;
    if (p != null && p != this) {
      p.kickIfStalled(); // its requests to us fail now rather than at their deadline
    }
  }

  void kickIfStalled() {
    if (stalled) {
      kick();
    }
  }

  /**
   * Asks for the waiting sends to be retried (or flushed, or timed out). Runs them now if the send
   * lock is free, else leaves them to its holder; never blocks.
   */
  void kick() {
    workPending = true;
    if (sendLock.isHeldByCurrentThread() || !sendLock.tryLock()) {
      return;
    }
    drainAndRelease();
  }

  @Override
  public void postSend(SendWorkRequest wr) {
    validate(wr);
    sendLock.lock();
    try {
      if (prePost(1)) {
        submit(wr);
      } else {
        runPending(); // flushes the older waiting ones first: completions stay in order
        executor.flush(wr);
      }
    } finally {
      drainAndRelease(); // also after a refused post: work asked of us meanwhile is not lost
    }
  }

  @Override
  public void postSend(SendWorkRequest[] wrs, int count) {
    if (count < 0 || count > wrs.length) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "post_send", "bad count " + count);
    }
    for (int i = 0; i < count; i++) {
      validate(wrs[i]);
    }
    sendLock.lock();
    try {
      if (prePost(count)) {
        for (int i = 0; i < count; i++) {
          if (state == QpState.RTS) {
            submit(wrs[i]);
          } else {
            runPending();
            executor.flush(wrs[i]);
          }
        }
      } else {
        runPending();
        for (int i = 0; i < count; i++) {
          executor.flush(wrs[i]);
        }
      }
    } finally {
      drainAndRelease(); // also after a refused post: work asked of us meanwhile is not lost
    }
  }

  /** Under the send lock: executes {@code wr} now, or queues it behind (or as) a waiting one. */
  private void submit(SendWorkRequest wr) {
    if (!pending.isEmpty()) {
      pending.add(wr);
      workPending = true;
      return;
    }
    int r = executor.execute(wr);
    if (r != WorkExecutor.DONE) {
      pending.add(wr);
      stallHead(r);
    }
  }

  private void stallHead(int reason) {
    long now = System.nanoTime();
    if (reason == WorkExecutor.STALL_RNR) {
      pending.stall(now + ctx.options().rnrTimeout().toNanos(), WcStatus.RNR_RETRY_EXC_ERR);
    } else {
      pending.stall(now + ctx.options().transportTimeout().toNanos(), WcStatus.RETRY_EXC_ERR);
    }
    if (!stalled) {
      stalled = true;
      sendCq.addStalled(this);
    }
  }

  /** Holding the send lock: runs requested work, unlocks, and takes over work asked meanwhile. */
  private void drainAndRelease() {
    while (true) {
      try {
        while (workPending) {
          workPending = false;
          runPending();
        }
      } finally {
        sendLock.unlock();
      }
      if (!workPending || sendLock.isHeldByCurrentThread() || !sendLock.tryLock()) {
        return;
      }
    }
  }

  /** Under the send lock: retries, times out or flushes the waiting requests in order. */
  private void runPending() {
    while (!pending.isEmpty()) {
      SendWorkRequest wr = pending.head();
      if (state != QpState.RTS) {
        executor.flush(wr);
        pending.pop();
        continue;
      }
      if (pending.expired(System.nanoTime())) {
        WcStatus timeout = pending.timeoutStatus();
        executor.complete(wr, timeout, 0);
        pending.pop();
        LoopbackQueuePair p = peer;
        if (timeout == WcStatus.RNR_RETRY_EXC_ERR && p != null && p != this) {
          p.fail(); // as the soft responder does: it NAKs and its QP enters ERROR
        }
        fail();
        continue;
      }
      int r = executor.execute(wr);
      if (r != WorkExecutor.DONE) {
        stallHead(r);
        return;
      }
      pending.pop();
    }
    if (stalled) {
      stalled = false;
      sendCq.removeStalled(this);
    }
  }

  /** Checks state and room; true to execute, false to flush (QP in ERROR). */
  private boolean prePost(int count) {
    QpState s = state;
    if (s != QpState.RTS && s != QpState.ERROR) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_STATE, "post_send", "QP is " + s + ", needs RTS");
    }
    if (attributes.maxSendWr() - pending.size() < count) {
      throw new VerbsException(
          VerbsException.Reason.RESOURCE_EXHAUSTED,
          "post_send",
          "send queue full ("
              + attributes.maxSendWr()
              + " outstanding); the peer has not posted receives for them");
    }
    return s == QpState.RTS;
  }

  private void validate(SendWorkRequest wr) {
    WrOpcode op = wr.opcode();
    if (wr.sgl().count() > attributes.maxSendSge()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          wr.sgl().count() + " SGEs, QP allows " + attributes.maxSendSge());
    }
    if (op.isRemote() && wr.sgl().totalLength() > LoopbackDeviceContext.MAX_MESSAGE_SIZE) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          "message of "
              + wr.sgl().totalLength()
              + " bytes above maximum "
              + LoopbackDeviceContext.MAX_MESSAGE_SIZE);
    }
    if (op == WrOpcode.BIND_MW
        && (!(wr.window() instanceof LoopbackMemoryWindow)
            || !(wr.bindRegion() instanceof LoopbackMemoryRegion))) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          "BIND_MW needs a window and a region of this provider");
    }
  }

  /**
   * The region of this PD that lkey names, if {@code [addr, addr+len)} lies inside it with {@code
   * rights}.
   */
  LoopbackMemoryRegion resolveLocal(long addr, int len, int lkey, int rights) {
    return LocalAccess.region(ctx.lkeys(), LoopbackMemoryRegion.class, pd, lkey, addr, len, rights);
  }

  @Override
  public void postReceive(ReceiveWorkRequest wr) {
    if (srq != null) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_recv",
          "queue pair 0x"
              + Integer.toHexString(qpn)
              + " takes its receives from a shared receive queue; post them there");
    }
    QpState s = state;
    if (s == QpState.RESET) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_STATE, "post_recv", "QP is RESET, needs INIT or later");
    }
    receiveQueue.post(wr, attributes.maxRecvSge(), s == QpState.ERROR);
    LoopbackQueuePair p = peer;
    if (p != null) {
      p.kickIfStalled();
    }
  }

  private void requireState(String verb, QpState expected) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "queue pair is closed");
    }
    if (state != expected) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_STATE,
          verb,
          "QP is " + state + ", transition needs " + expected);
    }
  }

  @Override
  public void close() {
    synchronized (stateLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    fail();
    // wait for a request being executed on another thread (a peer retrying ours) to finish
    sendLock.lock();
    try {
      runPending();
    } finally {
      sendLock.unlock();
    }
    if (stalled) {
      stalled = false;
      sendCq.removeStalled(this);
    }
    LoopbackRegistry.unregister(id, this);
    ctx.qps().remove(qpn, this);
    sendCq.users().remove(LoopbackProtectionDomain.QUEUE_PAIR);
    recvCq.users().remove(LoopbackProtectionDomain.QUEUE_PAIR);
    if (srq != null) {
      srq.detach(this);
    }
    pd.children().remove(LoopbackProtectionDomain.QUEUE_PAIR);
  }

  @Override
  public String toString() {
    return "LoopbackQueuePair{qpn=0x" + Integer.toHexString(qpn) + ", state=" + state + "}";
  }
}
