package io.srdma.verbs.ibv;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QpState;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A libibverbs RC queue pair ({@code struct ibv_qp}) connected with RoCE v2 / GRH addressing.
 *
 * <p>Send queue depth: libibverbs providers may round the depth up (rxe to 2^n - 1), so this class
 * also holds the requested depth: at most {@code maxSendWr} signaled requests whose completion has
 * not been polled. Unsignaled requests are limited by the device queue alone.
 */
final class IbvQueuePair implements QueuePair {
  private static final SecureRandom RANDOM = new SecureRandom();

  // ibv_qp_attr_mask bits
  private static final int STATE = 1;
  private static final int ACCESS_FLAGS = 1 << 3;
  private static final int PKEY_INDEX = 1 << 4;
  private static final int PORT = 1 << 5;
  private static final int AV = 1 << 7;
  private static final int PATH_MTU = 1 << 8;
  private static final int TIMEOUT = 1 << 9;
  private static final int RETRY_CNT = 1 << 10;
  private static final int RNR_RETRY = 1 << 11;
  private static final int RQ_PSN = 1 << 12;
  private static final int MAX_QP_RD_ATOMIC = 1 << 13;
  private static final int MIN_RNR_TIMER = 1 << 15;
  private static final int SQ_PSN = 1 << 16;
  private static final int MAX_DEST_RD_ATOMIC = 1 << 17;
  private static final int DEST_QPN = 1 << 20;

  // enum ibv_qp_state
  private static final int IBV_RESET = 0;
  private static final int IBV_INIT = 1;
  private static final int IBV_RTR = 2;
  private static final int IBV_RTS = 3;
  private static final int IBV_ERR = 6;

  private final IbvProtectionDomain pd;
  private final IbvDeviceContext context;
  private final IbvCompletionQueue sendCq;
  private final IbvCompletionQueue recvCq;
  private final long qp;
  private final int qpn;
  private final int psn;
  private final int maxSendWr;
  private final SendRequestBlock sendBlock;
  private final RecvRequestBlock recvBlock;
  private final IbvSharedReceiveQueue srq;
  private final long attr;
  private final Object control = new Object();
  private final AtomicInteger signaledOutstanding = new AtomicInteger();
  private volatile QpState state = QpState.RESET;
  private volatile boolean closed;

  private IbvQueuePair(
      IbvProtectionDomain pd,
      IbvCompletionQueue sendCq,
      IbvCompletionQueue recvCq,
      long qp,
      QueuePairAttributes attributes,
      IbvSharedReceiveQueue srq,
      long attr) {
    this.pd = pd;
    this.context = pd.ibvContext();
    this.sendCq = sendCq;
    this.recvCq = recvCq;
    this.qp = qp;
    this.qpn = Native.getInt(qp + Structs.Qp.QP_NUM);
    this.psn = RANDOM.nextInt(1 << 24);
    this.maxSendWr = attributes.maxSendWr();
    this.sendBlock = new SendRequestBlock(attributes.maxSendWr(), attributes.maxSendSge());
    this.srq = srq;
    this.recvBlock =
        srq == null ? new RecvRequestBlock(attributes.maxRecvSge(), "post_recv") : null;
    this.attr = attr;
  }

  /**
   * {@code ibv_create_qp} with IBV_QPT_RC, taking its receives from {@code srq} when not null; the
   * caller holds the PD's lock and has attached the SRQ.
   */
  static IbvQueuePair create(
      IbvProtectionDomain pd,
      IbvCompletionQueue sendCq,
      IbvCompletionQueue recvCq,
      QueuePairAttributes a,
      IbvSharedReceiveQueue srq) {
    long attr = Native.allocate(Structs.QpAttr.SIZE + Structs.QpInitAttr.SIZE);
    long init = attr + Structs.QpAttr.SIZE;
    Native.putLong(init + Structs.QpInitAttr.SEND_CQ, sendCq.handle());
    Native.putLong(init + Structs.QpInitAttr.RECV_CQ, recvCq.handle());
    Native.putInt(init + Structs.QpInitAttr.MAX_SEND_WR, a.maxSendWr());
    if (srq != null) {
      // the receive capacities are ignored with an SRQ (verbs.h); leave them 0
      Native.putLong(init + Structs.QpInitAttr.SRQ, srq.handle());
    } else {
      Native.putInt(init + Structs.QpInitAttr.MAX_RECV_WR, Math.max(1, a.maxRecvWr()));
      Native.putInt(init + Structs.QpInitAttr.MAX_RECV_SGE, Math.max(1, a.maxRecvSge()));
    }
    Native.putInt(init + Structs.QpInitAttr.MAX_SEND_SGE, a.maxSendSge());
    Native.putInt(init + Structs.QpInitAttr.QP_TYPE, Structs.QpInitAttr.QPT_RC);
    Native.putInt(init + Structs.QpInitAttr.SQ_SIG_ALL, 0);
    long qp = Native.lib().ibv_create_qp(pd.handle(), init);
    if (qp == 0) {
      int errno = Native.lastError();
      Native.free(attr);
      throw Errors.of("create_qp", errno, "RC queue pair " + a);
    }
    try {
      LayoutProbe.require(
          Native.getLong(qp + Structs.Qp.CONTEXT) == pd.ibvContext().handle()
              && Native.getLong(qp + Structs.Qp.PD) == pd.handle(),
          "ibv_qp",
          "qp->context, qp->pd");
    } catch (VerbsException e) {
      Native.lib().ibv_destroy_qp(qp);
      Native.free(attr);
      throw e;
    }
    IbvQueuePair result = new IbvQueuePair(pd, sendCq, recvCq, qp, a, srq, attr);
    sendCq.attach(result);
    recvCq.attach(result);
    return result;
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
    synchronized (attr()) {
      if (closed) {
        return state;
      }
      zeroAttr();
      int rc = Native.lib().ibv_query_qp(qp, attr, STATE, attr + Structs.QpAttr.SIZE);
      if (rc != 0) {
        throw Errors.of("query_qp", rc, "queue pair 0x" + Integer.toHexString(qpn));
      }
      state = fromIbv(Native.getInt(attr + Structs.QpAttr.QP_STATE));
      return state;
    }
  }

  /** Guards the attribute buffer, the state transitions and close. */
  private Object attr() {
    return control;
  }

  private static QpState fromIbv(int s) {
    return switch (s) {
      case IBV_RESET -> QpState.RESET;
      case IBV_INIT -> QpState.INIT;
      case IBV_RTR -> QpState.RTR;
      case IBV_RTS, 4 -> QpState.RTS;
      default -> QpState.ERROR;
    };
  }

  @Override
  public ConnectionInfo localInfo() {
    return new ConnectionInfo(
        qpn, psn, new IbvAddress(context.gid(), context.lid(), context.portNumber()).encode());
  }

  @Override
  public void init(int access) {
    AccessFlags.validate("modify_qp", access);
    synchronized (attr()) {
      requireState("modify_qp(INIT)", QpState.RESET);
      zeroAttr();
      Native.putInt(attr + Structs.QpAttr.QP_STATE, IBV_INIT);
      Native.putShort(attr + Structs.QpAttr.PKEY_INDEX, (short) 0);
      Native.putByte(attr + Structs.QpAttr.PORT_NUM, (byte) context.portNumber());
      Native.putInt(
          attr + Structs.QpAttr.QP_ACCESS_FLAGS,
          access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.LOCAL_WRITE));
      modify("modify_qp(INIT)", STATE | PKEY_INDEX | PORT | ACCESS_FLAGS);
      state = QpState.INIT;
    }
  }

  @Override
  public void readyToReceive(ConnectionInfo remote) {
    synchronized (attr()) {
      requireState("modify_qp(RTR)", QpState.INIT);
      IbvAddress peer = IbvAddress.decode(remote.address());
      DeviceOptions options = context.options();
      zeroAttr();
      Native.putInt(attr + Structs.QpAttr.QP_STATE, IBV_RTR);
      Native.putInt(attr + Structs.QpAttr.PATH_MTU, context.activeMtu());
      Native.putInt(attr + Structs.QpAttr.DEST_QP_NUM, remote.qpn());
      Native.putInt(attr + Structs.QpAttr.RQ_PSN, remote.psn());
      Native.putByte(attr + Structs.QpAttr.MAX_DEST_RD_ATOMIC, (byte) context.maxDestRdAtomic());
      Native.putByte(
          attr + Structs.QpAttr.MIN_RNR_TIMER, (byte) Timers.rnrTimerCode(options.rnrTimeout()));
      byte[] dgid = peer.gid();
      for (int i = 0; i < dgid.length; i++) {
        Native.putByte(attr + Structs.QpAttr.AH_DGID + i, dgid[i]);
      }
      Native.putByte(attr + Structs.QpAttr.AH_SGID_INDEX, (byte) context.gidIndex());
      Native.putByte(attr + Structs.QpAttr.AH_HOP_LIMIT, (byte) 1);
      Native.putShort(attr + Structs.QpAttr.AH_DLID, (short) peer.lid());
      Native.putByte(attr + Structs.QpAttr.AH_SL, (byte) 0);
      Native.putByte(attr + Structs.QpAttr.AH_IS_GLOBAL, (byte) 1);
      Native.putByte(attr + Structs.QpAttr.AH_PORT_NUM, (byte) context.portNumber());
      modify(
          "modify_qp(RTR)",
          STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER);
      state = QpState.RTR;
    }
  }

  @Override
  public void readyToSend() {
    synchronized (attr()) {
      requireState("modify_qp(RTS)", QpState.RTR);
      zeroAttr();
      Native.putInt(attr + Structs.QpAttr.QP_STATE, IBV_RTS);
      Native.putInt(attr + Structs.QpAttr.SQ_PSN, psn);
      Native.putByte(
          attr + Structs.QpAttr.TIMEOUT,
          (byte) Timers.ackTimeoutExponent(context.options().transportTimeout()));
      Native.putByte(attr + Structs.QpAttr.RETRY_CNT, (byte) Timers.RETRIES);
      Native.putByte(attr + Structs.QpAttr.RNR_RETRY, (byte) Timers.RETRIES);
      Native.putByte(attr + Structs.QpAttr.MAX_RD_ATOMIC, (byte) context.maxRdAtomic());
      modify("modify_qp(RTS)", STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC);
      state = QpState.RTS;
    }
  }

  @Override
  public void toError() {
    synchronized (attr()) {
      requireOpen("modify_qp(ERR)");
      zeroAttr();
      Native.putInt(attr + Structs.QpAttr.QP_STATE, IBV_ERR);
      modify("modify_qp(ERR)", STATE);
      state = QpState.ERROR;
    }
  }

  private void requireOpen(String verb) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "queue pair is closed");
    }
  }

  private void requireState(String verb, QpState expected) {
    requireOpen(verb);
    if (state != expected) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_STATE,
          verb,
          "queue pair 0x" + Integer.toHexString(qpn) + " is " + state + ", needs " + expected);
    }
  }

  private void zeroAttr() {
    Native.MEMORY.setMemory(attr, Structs.QpAttr.SIZE + Structs.QpInitAttr.SIZE, (byte) 0);
  }

  private void modify(String verb, int mask) {
    int rc = Native.lib().ibv_modify_qp(qp, attr, mask);
    if (rc != 0) {
      throw Errors.of(verb, rc, "queue pair 0x" + Integer.toHexString(qpn));
    }
  }

  /** A send-side completion (or any error completion) of this QP was polled. */
  void sendCompleted(boolean sendSide, WcStatus status) {
    if (sendSide || status != WcStatus.SUCCESS) {
      signaledOutstanding.updateAndGet(n -> n > 0 ? n - 1 : 0);
    }
  }

  @Override
  public void postSend(SendWorkRequest wr) {
    synchronized (sendBlock) {
      requirePostable();
      int signaled = wr.signaled() ? 1 : 0;
      reserve(signaled);
      try {
        sendBlock.encode(0, wr, true, pd);
        post(1);
      } catch (RuntimeException e) {
        signaledOutstanding.addAndGet(-signaled);
        throw e;
      }
    }
  }

  @Override
  public void postSend(SendWorkRequest[] wrs, int count) {
    if (count < 1 || count > wrs.length || count > sendBlock.slots()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          count + " requests for a send queue of " + sendBlock.slots());
    }
    synchronized (sendBlock) {
      requirePostable();
      int signaled = 0;
      for (int i = 0; i < count; i++) {
        signaled += wrs[i].signaled() ? 1 : 0;
      }
      reserve(signaled);
      try {
        for (int i = 0; i < count; i++) {
          sendBlock.encode(i, wrs[i], i == count - 1, pd);
        }
        post(count);
      } catch (RuntimeException e) {
        signaledOutstanding.addAndGet(-signaled);
        throw e;
      }
    }
  }

  private void requirePostable() {
    requireOpen("post_send");
    QpState s = state;
    if (s != QpState.RTS && s != QpState.ERROR) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_STATE,
          "post_send",
          "queue pair 0x" + Integer.toHexString(qpn) + " is " + s + ", needs RTS");
    }
  }

  private void reserve(int signaled) {
    if (signaled == 0) {
      return;
    }
    if (signaledOutstanding.addAndGet(signaled) > maxSendWr) {
      signaledOutstanding.addAndGet(-signaled);
      throw new VerbsException(
          VerbsException.Reason.RESOURCE_EXHAUSTED,
          "post_send",
          "send queue full: " + maxSendWr + " signaled requests await polling");
    }
  }

  private void post(int count) {
    int rc = context.ops().postSend(qp, sendBlock.wr(0), sendBlock.badWrPointer());
    if (rc != 0) {
      throw rc == Errors.ENOMEM
          ? new VerbsException(
              VerbsException.Reason.RESOURCE_EXHAUSTED, "post_send", "send queue full")
          : Errors.of("post_send", rc, "queue pair 0x" + Integer.toHexString(qpn));
    }
    sendBlock.bindsPosted(count);
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
    synchronized (recvBlock) {
      requireOpen("post_recv");
      if (state == QpState.RESET) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_STATE, "post_recv", "queue pair is RESET, needs INIT");
      }
      recvBlock.encode(wr);
      // providers return the errno with either sign (rxe: -ENOMEM for a full queue)
      int rc = Math.abs(context.ops().postRecv(qp, recvBlock.wr(), recvBlock.badWrPointer()));
      if (rc != 0) {
        throw rc == Errors.ENOMEM
            ? new VerbsException(
                VerbsException.Reason.RESOURCE_EXHAUSTED, "post_recv", "receive queue full")
            : Errors.of("post_recv", rc, "queue pair 0x" + Integer.toHexString(qpn));
      }
    }
  }

  @Override
  public void close() {
    synchronized (attr()) {
      if (closed) {
        return;
      }
      int rc = Native.lib().ibv_destroy_qp(qp);
      if (rc != 0) {
        throw Errors.of("destroy_qp", rc, "queue pair 0x" + Integer.toHexString(qpn));
      }
      closed = true;
      synchronized (sendBlock) {
        sendBlock.close();
      }
      if (recvBlock != null) {
        synchronized (recvBlock) {
          recvBlock.close();
        }
      }
      Native.free(attr);
    }
    sendCq.detach(this);
    recvCq.detach(this);
    pd.children().remove("queue pair");
    if (srq != null) {
      srq.detach();
    }
  }

  @Override
  public String toString() {
    return "ibv RC queue pair 0x" + Integer.toHexString(qpn) + " (" + state + ")";
  }
}
