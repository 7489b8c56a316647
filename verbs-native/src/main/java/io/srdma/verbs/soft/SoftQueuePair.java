package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import io.srdma.verbs.internal.LocalAccess;
import io.srdma.verbs.internal.RemoteAccess;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RC queue pair of the soft provider. Requests go out on a TCP connection to the peer's
 * responder ({@link Requester}); the peer's requests arrive on a connection our device's responder
 * accepted ({@link Responder}). Posting writes to the socket on the caller's thread; responses are
 * read by the thread polling the send CQ (or the device's timer), which produces the completions.
 */
final class SoftQueuePair implements QueuePair, RemoteAccess.Target<SoftProtectionDomain> {
  private static final Logger LOG = LoggerFactory.getLogger(SoftQueuePair.class);

  /**
   * Unsignaled requests ask for an acknowledgement at least this often, to free send slots; a send
   * queue of fewer than {@code 2 * ACK_EVERY} slots asks every {@code maxSendWr / 2} (at least
   * every request), so at most half the queue waits for an ACK that nobody asked for.
   */
  static final int ACK_EVERY = 16;

  private final SoftProtectionDomain pd;
  private final SoftDeviceContext ctx;
  private final SoftCompletionQueue sendCq;
  private final SoftCompletionQueue recvCq;
  private final QueuePairAttributes attributes;
  private final int qpn;
  private final int startPsn;
  private final SendQueue sendQueue;
  private final ReceiveQueue receiveQueue;
  private final SoftSharedReceiveQueue srq;
  private final Object stateLock = new Object();
  private final Object sendLock = new Object();
  private volatile QpState state = QpState.RESET;
  private volatile int access;
  private volatile ConnectionInfo remote;
  private volatile Requester requester;
  private boolean attached; // the requester to the send CQ's selector; under sendLock
  private volatile Responder responder;
  private volatile long lastProgressNanos;
  private final SoftMemoryRegion[] resolved;
  private int nextPsn;
  private int sinceAck;
  private final int ackEvery;
  private boolean closed;

  SoftQueuePair(
      SoftProtectionDomain pd,
      SoftCompletionQueue sendCq,
      SoftCompletionQueue recvCq,
      QueuePairAttributes attributes,
      SoftSharedReceiveQueue srq) {
    this.pd = pd;
    this.ctx = pd.softContext();
    this.sendCq = sendCq;
    this.recvCq = recvCq;
    this.attributes = attributes;
    this.qpn = ctx.qps().allocate(this);
    this.startPsn = ctx.randomPsn();
    this.nextPsn = startPsn;
    this.resolved = new SoftMemoryRegion[attributes.maxSendSge()];
    this.sendQueue = new SendQueue(sendCq, qpn, attributes.maxSendWr(), attributes.maxSendSge());
    this.ackEvery = ackEvery(attributes.maxSendWr());
    this.srq = srq;
    this.receiveQueue =
        srq == null
            ? ReceiveQueue.own(recvCq, qpn, attributes.maxRecvWr(), attributes.maxRecvSge())
            : ReceiveQueue.claiming(srq.ring(), recvCq, qpn);
    sendCq.users().add(SoftProtectionDomain.QUEUE_PAIR);
    recvCq.users().add(SoftProtectionDomain.QUEUE_PAIR);
    ctx.register(this);
  }

  @Override
  public SoftProtectionDomain pd() {
    return pd;
  }

  SoftDeviceContext softContext() {
    return ctx;
  }

  @Override
  public int accessFlags() {
    return access;
  }

  ConnectionInfo remote() {
    return remote;
  }

  /** This QP's receives: its own queue, or its claims on the shared receive queue. */
  ReceiveQueue receiveQueue() {
    return receiveQueue;
  }

  /** The responder serving our peer's requests, once its connection arrived; else null. */
  Responder responder() {
    return responder;
  }

  SendQueue sendQueue() {
    return sendQueue;
  }

  SoftCompletionQueue recvCq() {
    return recvCq;
  }

  QueuePairAttributes attributes() {
    return attributes;
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
    return new ConnectionInfo(qpn, startPsn, ctx.localAddress());
  }

  @Override
  public void init(int qpAccess) {
    AccessFlags.validate("modify_qp", qpAccess);
    synchronized (stateLock) {
      requireState("modify_qp(INIT)", QpState.RESET);
      this.access = qpAccess;
      setState(QpState.INIT);
    }
  }

  @Override
  public void readyToReceive(ConnectionInfo peer) {
    SoftDeviceContext.decodeAddress(peer.address(), "modify_qp(RTR)");
    synchronized (stateLock) {
      requireState("modify_qp(RTR)", QpState.INIT);
      this.remote = peer;
      setState(QpState.RTR);
    }
  }

  @Override
  public void readyToSend() {
    synchronized (stateLock) {
      requireState("modify_qp(RTS)", QpState.RTR);
    }
    Requester r = Requester.connect(this, remote, ctx.options().transportTimeout());
    synchronized (stateLock) {
      if (state != QpState.RTR) {
        r.close();
        throw new VerbsException(
            VerbsException.Reason.INVALID_STATE,
            "modify_qp(RTS)",
            "QP left RTR while connecting: " + state);
      }
      requester = r;
      lastProgressNanos = System.nanoTime();
      setState(QpState.RTS);
    }
  }

  @Override
  public void toError() {
    fail(null);
  }

  /**
   * A local or remote failure: enters ERROR, completes the first pending request with {@code
   * first}.
   */
  void fail(WcStatus first) {
    synchronized (stateLock) {
      if (state == QpState.ERROR) {
        return;
      }
      setState(QpState.ERROR);
    }
    if (LOG.isDebugEnabled()) {
      // which path failed the QP (a NAK, a lost connection, a refused local operation, the
      // watchdog): the caller's frames say it, on this rare path only
      LOG.debug(
          "QP 0x{} entered ERROR{}",
          Integer.toHexString(qpn),
          first == null ? "" : " (" + first + ")",
          new Throwable("the failing path"));
    }
    Requester r = requester;
    if (r != null) {
      r.close();
    }
    Responder in = responder;
    if (in != null) {
      in.close();
    }
    sendQueue.failAll(first == null ? WcStatus.WR_FLUSH_ERR : first);
    receiveQueue.flush();
  }

  /** A NAK for {@code psn}: earlier requests succeeded, this one failed, the rest are flushed. */
  void failAt(int psn, WcStatus status) {
    sendQueue.failAt(psn, status);
    fail(null);
  }

  /** Called by the responder that accepted our peer's connection; false if one is attached. */
  boolean attachResponder(Responder r) {
    synchronized (stateLock) {
      if (responder != null || closed || state == QpState.ERROR) {
        return false;
      }
      responder = r;
      return true;
    }
  }

  /** Waits (bounded) until the QP can serve incoming requests. */
  boolean awaitReadyToReceive(long deadlineNanos) throws InterruptedException {
    synchronized (stateLock) {
      while (state == QpState.RESET || state == QpState.INIT) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(stateLock, left);
      }
      return state == QpState.RTR || state == QpState.RTS;
    }
  }

  void progressed() {
    lastProgressNanos = System.nanoTime();
  }

  /** Watchdog checks (one per {@code WATCHDOG_PERIOD_MS}) between reads of an idle QP's socket. */
  static final int IDLE_CHECKS_PER_READ = 20;

  private int idleChecks; // the watchdog thread's only

  /** Watchdog: a request without progress for the transport timeout fails with RETRY_EXC_ERR. */
  void checkProgress(long nowNanos, long timeoutNanos) {
    Requester r = requester;
    boolean outstanding = sendQueue.hasPendingRemote();
    if (r != null
        && state == QpState.RTS
        && (outstanding || ++idleChecks >= IDLE_CHECKS_PER_READ)) {
      // Responses of QPs whose CQ nobody polls, and a dead peer, are noticed here. A QP with
      // nothing outstanding expects no response (only its peer's close, which its responder
      // sees too): its socket is read every IDLE_CHECKS_PER_READ checks, not at every check (a
      // read per QP every 50 ms was 100,000 system calls a second per side at 5,000 sessions).
      idleChecks = 0;
      r.progress();
    }
    if (state == QpState.RTS
        && sendQueue.hasPendingRemote()
        && nowNanos - lastProgressNanos > timeoutNanos) {
      fail(WcStatus.RETRY_EXC_ERR);
    }
  }

  @Override
  public void postSend(SendWorkRequest wr) {
    synchronized (sendLock) {
      validate(wr);
      if (prePost(1)) {
        attachBeforeRemote(wr);
        post(wr);
        flush();
      } else {
        flushWr(wr);
      }
    }
  }

  @Override
  public void postSend(SendWorkRequest[] wrs, int count) {
    if (count < 0 || count > wrs.length) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "post_send", "bad count " + count);
    }
    synchronized (sendLock) {
      for (int i = 0; i < count; i++) {
        validate(wrs[i]);
      }
      if (prePost(count)) {
        for (int i = 0; i < count && !attached; i++) {
          attachBeforeRemote(wrs[i]);
        }
        for (int i = 0; i < count; i++) {
          post(wrs[i]);
        }
        flush();
      } else {
        for (int i = 0; i < count; i++) {
          flushWr(wrs[i]);
        }
      }
    }
  }

  /**
   * Before the first remote request: the send CQ's pollers read this QP's responses from now on (it
   * opens its selector then). Before anything of the post is queued, so a failure (no descriptor
   * left) posts nothing. Caller holds the send lock.
   */
  private void attachBeforeRemote(SendWorkRequest wr) {
    if (!attached && wr.opcode().isRemote()) {
      sendCq.attach(requester);
      attached = true;
    }
  }

  /** Checks state and room; true to process, false to flush (QP in ERROR). */
  private boolean prePost(int count) {
    QpState s = state;
    if (s != QpState.RTS && s != QpState.ERROR) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_STATE, "post_send", "QP is " + s + ", needs RTS");
    }
    if (sendQueue.free() < count) {
      throw new VerbsException(
          VerbsException.Reason.RESOURCE_EXHAUSTED,
          "post_send",
          "send queue full ("
              + attributes.maxSendWr()
              + " outstanding); poll completions or signal more often");
    }
    return s == QpState.RTS;
  }

  private void flushWr(SendWorkRequest wr) {
    validate(wr);
    sendQueue.addDone(
        wr.wrId(), wr.opcode().completionOpcode(), wr.signaled(), WcStatus.WR_FLUSH_ERR);
  }

  private void validate(SendWorkRequest wr) {
    WrOpcode op = wr.opcode();
    if (wr.sgl().count() > attributes.maxSendSge()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          wr.sgl().count() + " SGEs, QP allows " + attributes.maxSendSge());
    }
    if (op.isRemote() && wr.sgl().totalLength() > SoftDeviceContext.MAX_MESSAGE_SIZE) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          "message of "
              + wr.sgl().totalLength()
              + " bytes above maximum "
              + SoftDeviceContext.MAX_MESSAGE_SIZE);
    }
    if (op == WrOpcode.BIND_MW
        && (!(wr.window() instanceof SoftMemoryWindow)
            || !(wr.bindRegion() instanceof SoftMemoryRegion))) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          "BIND_MW needs a window and a region of this provider");
    }
  }

  private void post(SendWorkRequest wr) {
    if (state != QpState.RTS) {
      flushWr(wr);
      return;
    }
    WrOpcode op = wr.opcode();
    if (op == WrOpcode.BIND_MW) {
      WcStatus s = bind(wr);
      sendQueue.addDone(wr.wrId(), WcOpcode.BIND_MW, wr.signaled(), s);
      if (s != WcStatus.SUCCESS) {
        fail(null);
      }
      return;
    }
    if (op == WrOpcode.LOCAL_INV) {
      WcStatus s = invalidate(wr.invalidateRkey());
      sendQueue.addDone(wr.wrId(), WcOpcode.LOCAL_INV, wr.signaled(), s);
      if (s != WcStatus.SUCCESS) {
        fail(null);
      }
      return;
    }
    Requester r = requester;
    ScatterGatherList sgl = wr.sgl();
    boolean read = op == WrOpcode.RDMA_READ;
    int needed = read ? AccessFlags.LOCAL_WRITE : 0;
    int total = (int) sgl.totalLength();
    for (int k = 0; k < sgl.count(); k++) {
      resolved[k] = resolveLocal(sgl.address(k), sgl.length(k), sgl.lkey(k), needed);
      if (resolved[k] == null) {
        sendQueue.addDone(wr.wrId(), op.completionOpcode(), wr.signaled(), WcStatus.LOC_PROT_ERR);
        fail(null);
        return;
      }
    }
    int psn = nextPsn;
    nextPsn = (nextPsn + 1) & 0xFFFFFF;
    // Not every request of a nearly full queue: the responder acknowledges cumulatively, so an
    // ACK every ackEvery requests frees slots as fast, with one response frame per ackEvery.
    boolean ackReq = wr.signaled() || read || ++sinceAck >= ackEvery;
    if (ackReq) {
      sinceAck = 0;
    }
    if (!sendQueue.hasPendingRemote()) {
      progressed();
    }
    int slot = sendQueue.addRemote(wr.wrId(), op.completionOpcode(), wr.signaled(), psn, total);
    byte wireOp = wireOpcode(op);
    byte flags = ackReq ? RequestFlyweight.FLAG_ACK_REQ : 0;
    r.addHeader(wireOp, flags, psn, total, wr.immData(), wr.remoteAddress(), wr.rkey());
    for (int k = 0; k < sgl.count(); k++) {
      SoftMemoryRegion mr = resolved[k];
      resolved[k] = null;
      long offset = mr.offsetOf(sgl.address(k), sgl.length(k));
      if (read) {
        sendQueue.addReadTarget(slot, mr, offset, sgl.length(k));
      } else if (total <= Requester.INLINE_MAX) {
        r.addInline(mr, offset, sgl.length(k));
      } else if (sgl.length(k) > 0) {
        r.addPayload(mr, offset, sgl.length(k));
      }
    }
  }

  /** How many unsignaled requests may go without asking for an ACK, for a send queue of n. */
  static int ackEvery(int sendQueueSlots) {
    return Math.max(1, Math.min(ACK_EVERY, sendQueueSlots / 2));
  }

  private void flush() {
    Requester r = requester;
    if (r == null || state != QpState.RTS) {
      return;
    }
    try {
      r.flush();
    } catch (IOException e) {
      fail(WcStatus.RETRY_EXC_ERR);
    }
  }

  /**
   * The region of this PD that lkey names, if {@code [addr, addr+len)} lies inside it with {@code
   * rights}.
   */
  SoftMemoryRegion resolveLocal(long addr, int len, int lkey, int rights) {
    return LocalAccess.region(ctx.lkeys(), SoftMemoryRegion.class, pd, lkey, addr, len, rights);
  }

  private WcStatus bind(SendWorkRequest wr) {
    SoftMemoryWindow mw = (SoftMemoryWindow) wr.window();
    SoftMemoryRegion mr = (SoftMemoryRegion) wr.bindRegion();
    return mw.bind(mr, pd, wr.bindAddress(), wr.bindLength(), wr.bindAccess(), this)
        ? WcStatus.SUCCESS
        : WcStatus.MW_BIND_ERR;
  }

  private WcStatus invalidate(int rkey) {
    return LocalAccess.invalidate(ctx.rkeys(), SoftMemoryWindow.class, pd, this, rkey)
        ? WcStatus.SUCCESS
        : WcStatus.LOC_QP_OP_ERR;
  }

  private static byte wireOpcode(WrOpcode op) {
    return switch (op) {
      case RDMA_WRITE -> RequestFlyweight.OP_WRITE;
      case RDMA_WRITE_WITH_IMM -> RequestFlyweight.OP_WRITE_IMM;
      case SEND -> RequestFlyweight.OP_SEND;
      case SEND_WITH_IMM -> RequestFlyweight.OP_SEND_IMM;
      case RDMA_READ -> RequestFlyweight.OP_READ;
      case LOCAL_INV, BIND_MW -> throw new AssertionError(op);
    };
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

  private void setState(QpState next) {
    state = next;
    stateLock.notifyAll();
  }

  @Override
  public void close() {
    synchronized (stateLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    fail(null);
    Responder in = responder;
    if (in != null) {
      in.join();
    }
    ctx.unregister(this);
    ctx.qps().remove(qpn, this);
    sendCq.users().remove(SoftProtectionDomain.QUEUE_PAIR);
    recvCq.users().remove(SoftProtectionDomain.QUEUE_PAIR);
    pd.children().remove(SoftProtectionDomain.QUEUE_PAIR);
    if (srq != null) {
      srq.detach();
    }
  }

  @Override
  public String toString() {
    return "SoftQueuePair{qpn=0x" + Integer.toHexString(qpn) + ", state=" + state + "}";
  }
}
