package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.internal.KeyTable;
import io.srdma.verbs.internal.RemoteAccess;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link Responder}'s requests once its queue pair is attached: reading and checking each request
 * header (version, opcode, length, PSN), resolving a WRITE's access, waiting (bounded) for a posted
 * receive for a SEND or WRITE_WITH_IMM, scattering a SEND over the receive's SGEs, pushing the
 * receive completions, and ending each request with a cumulative ACK or a NAK. The payload moves
 * themselves are {@link ResponderPayload}'s. One per responder, driven by its loop thread only
 * (except {@code posted}, run by the thread that posts a receive).
 */
final class ResponderRequests {
  private final Responder r;
  private final SoftDeviceContext ctx;
  private final SocketChannel channel;
  private final ReadAhead readAhead;
  private final RequestFlyweight request;
  private final KeyTable<Object> rkeys;
  private final RemoteAccess<SoftProtectionDomain, SoftMemoryRegion, SoftMemoryWindow> access;
  private final ResponderPayload payload;
  private final ResponderTx tx;

  private int readsThisDrive;
  private int expectedPsn;
  private int pendingAckPsn = -1;
  private int unwokenCompletions; // receive completions pushed since the last wakeReceiver()

  /** A wake-up is registered with the receive queue and has not run yet (at most one at a time). */
  private final AtomicBoolean awaitingPost = new AtomicBoolean();

  /** Run by the thread that posts the receive this responder waits for: drive it now. */
  private final Runnable posted = this::receivePosted;

  // The request being executed.
  private byte op;
  private int psn;
  private int length;
  private int imm;
  private boolean ackReq;

  // A SEND being scattered over the receive's SGEs.
  private int recvSlot;
  private int recvSge;
  private int recvLeft;

  ResponderRequests(
      Responder r,
      SoftDeviceContext ctx,
      SocketChannel channel,
      ReadAhead readAhead,
      RequestFlyweight request,
      KeyTable<Object> rkeys,
      RemoteAccess<SoftProtectionDomain, SoftMemoryRegion, SoftMemoryWindow> access,
      ResponderPayload payload,
      ResponderTx tx) {
    this.r = r;
    this.ctx = ctx;
    this.channel = channel;
    this.readAhead = readAhead;
    this.request = request;
    this.rkeys = rkeys;
    this.access = access;
    this.payload = payload;
    this.tx = tx;
  }

  /** The queue pair is attached; its peer's first request carries {@code firstPsn}. */
  void start(int firstPsn) {
    expectedPsn = firstPsn;
  }

  /** A drive begins: its hosted reads are whole again. */
  void newDrive() {
    readsThisDrive = 0;
  }

  boolean header() throws IOException {
    if (readAhead.remaining() < RequestFlyweight.LENGTH) {
      wakeReceiver(); // the read batch is executed: one wake-up for its receive completions
      if (pendingAckPsn >= 0) {
        // Everything read so far is executed: one cumulative ACK for it.
        tx.stage(ResponseFlyweight.TYPE_ACK, (byte) 0, pendingAckPsn, 0);
        pendingAckPsn = -1;
        return true;
      }
      if (readAhead.takeShortRead()) {
        return r.waitFor(SelectionKey.OP_READ, readAhead.idle());
      }
      if (payload.hostedBudgetSpent()) {
        // the payload bound is spent: what the socket holds keeps it selected for the next drive
        return r.waitFor(SelectionKey.OP_READ, Responder.NO_DEADLINE);
      }
      if (r.onHostedLoop() && ++readsThisDrive > Responder.HOSTED_READS) {
        // the poller's turn to open what was placed; unread bytes keep the socket selected
        return r.waitFor(SelectionKey.OP_READ, Responder.NO_DEADLINE);
      }
      if (readAhead.read(channel) > 0) {
        return true;
      }
      return r.waitFor(SelectionKey.OP_READ, readAhead.idle());
    }
    request.wrap(readAhead.buffer(), readAhead.buffer().position());
    op = request.opcode();
    psn = request.psn();
    length = request.length();
    if (request.version() != RequestFlyweight.VERSION
        || !RequestFlyweight.isKnown(op)
        || !request.reservedZero()) {
      throw new Responder.MalformedException(
          "bad request header (version " + request.version() + ", opcode " + op + ")");
    }
    if (length < 0 || length > SoftDeviceContext.MAX_MESSAGE_SIZE) {
      throw new Responder.MalformedException(
          "request length " + Integer.toUnsignedString(length) + " above maximum");
    }
    if (psn != expectedPsn) {
      throw new Responder.MalformedException("PSN " + psn + " but expected " + expectedPsn);
    }
    expectedPsn = (expectedPsn + 1) & 0xFFFFFF;
    readAhead.requestTaken();
    ackReq = (request.flags() & RequestFlyweight.FLAG_ACK_REQ) != 0;
    imm = request.imm();
    long address = request.address();
    int rkey = request.rkey();
    readAhead.consume(RequestFlyweight.LENGTH);
    switch (op) {
      case RequestFlyweight.OP_WRITE, RequestFlyweight.OP_WRITE_IMM -> {
        if (!access.resolve(rkeys, r.qp, rkey, address, length, AccessFlags.REMOTE_WRITE)) {
          return payload.beginSkip(length, WcStatus.REM_ACCESS_ERR);
        }
        if (op == RequestFlyweight.OP_WRITE_IMM) {
          return enterAwaitReceive();
        }
        return payload.beginPlace(
            0, access.window(), access.binding(), access.region(), access.offset(), length);
      }
      case RequestFlyweight.OP_SEND, RequestFlyweight.OP_SEND_IMM -> {
        return enterAwaitReceive();
      }
      default -> {
        return payload.beginRead(address, rkey, psn, length);
      }
    }
  }

  private boolean enterAwaitReceive() {
    r.phase = Responder.AWAIT_RECEIVE;
    r.deadline = System.nanoTime() + ctx.options().rnrTimeout().toNanos();
    return true;
  }

  /** A WRITE_WITH_IMM or SEND waits (bounded, without reading on) for a posted receive. */
  boolean awaitReceive() throws IOException {
    int slot = postedReceive();
    if (slot < 0 && !Responder.passed(r.deadline) && awaitingPost.compareAndSet(false, true)) {
      r.qp.receiveQueue().wakeOnPost(posted);
      slot = postedReceive(); // a receive posted just before the registration is not missed
    }
    if (slot < 0) {
      if (Responder.passed(r.deadline)) {
        return payload.beginSkip(length, WcStatus.RNR_RETRY_EXC_ERR);
      }
      return r.park(r.deadline);
    }
    if (op == RequestFlyweight.OP_WRITE_IMM) {
      return payload.beginPlace(
          0, access.window(), access.binding(), access.region(), access.offset(), length);
    }
    return beginSend(slot);
  }

  private void receivePosted() {
    if (awaitingPost.compareAndSet(true, false)) {
      r.owner().poke(r);
    }
  }

  /** Drops a wake-up still registered with {@code qp}'s receive queue (an SRQ outlives it). */
  void cancelWakeOnPost(SoftQueuePair qp) {
    if (awaitingPost.getAndSet(false)) {
      qp.receiveQueue().cancelWakeOnPost(posted);
    }
  }

  /** The slot of the oldest posted receive, or -1: a look, no wait. */
  private int postedReceive() throws IOException {
    try {
      return r.qp.receiveQueue().awaitHead(System.nanoTime() - 1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private boolean beginSend(int slot) {
    SoftQueuePair qp = r.qp;
    ReceiveQueue rq = qp.receiveQueue();
    long room = 0;
    for (int k = 0; k < rq.sges(slot); k++) {
      room += rq.length(slot, k);
      if (qp.resolveLocal(
              rq.address(slot, k), rq.length(slot, k), rq.lkey(slot, k), AccessFlags.LOCAL_WRITE)
          == null) {
        completeReceive(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
        return payload.beginSkip(length, WcStatus.REM_OP_ERR);
      }
    }
    if (length > room) {
      completeReceive(WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0);
      return payload.beginSkip(length, WcStatus.REM_INV_REQ_ERR);
    }
    recvSlot = slot;
    recvSge = 0;
    recvLeft = length;
    return nextSendSge();
  }

  private boolean nextSendSge() {
    SoftQueuePair qp = r.qp;
    ReceiveQueue rq = qp.receiveQueue();
    if (recvSge >= rq.sges(recvSlot) || recvLeft == 0) {
      completeReceive(
          WcStatus.SUCCESS, WcOpcode.RECV, length, op == RequestFlyweight.OP_SEND_IMM, imm);
      return finish(WcStatus.SUCCESS);
    }
    int k = recvSge;
    int n = Math.min(recvLeft, rq.length(recvSlot, k));
    SoftMemoryRegion mr =
        qp.resolveLocal(rq.address(recvSlot, k), n, rq.lkey(recvSlot, k), AccessFlags.LOCAL_WRITE);
    if (mr == null) {
      // The receive buffer was deregistered before its part of the payload.
      completeReceive(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
      return payload.beginSkip(recvLeft, WcStatus.REM_OP_ERR);
    }
    return payload.beginPlace(1 + k, null, null, mr, mr.offsetOf(rq.address(recvSlot, k), n), n);
  }

  /**
   * A placement ended with {@code unread} bytes of it not read: SUCCESS, REM_ACCESS_ERR (revoked
   * mid-payload) or REM_OP_ERR (stalled).
   */
  boolean placed(WcStatus result, int unread) {
    boolean send = op == RequestFlyweight.OP_SEND || op == RequestFlyweight.OP_SEND_IMM;
    if (result == WcStatus.REM_OP_ERR) {
      // Stalled: the NAK at once; a pending receive stays posted and is flushed with the QP.
      return finish(result);
    }
    if (result != WcStatus.SUCCESS) {
      if (!send) {
        // Revoked mid-payload: the rest is discarded so the NAK is read before the connection
        // closes; nothing more is placed.
        return payload.beginSkip(unread, result);
      }
      // The receive buffer was deregistered during its part of the payload.
      int n = Math.min(recvLeft, r.qp.receiveQueue().length(recvSlot, recvSge));
      completeReceive(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
      return payload.beginSkip(unread + recvLeft - n, WcStatus.REM_OP_ERR);
    }
    if (send) {
      int n = Math.min(recvLeft, r.qp.receiveQueue().length(recvSlot, recvSge));
      recvLeft -= n;
      recvSge++;
      return nextSendSge();
    }
    if (op == RequestFlyweight.OP_WRITE_IMM) {
      completeReceive(WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, length, true, imm);
    }
    return finish(WcStatus.SUCCESS);
  }

  /** The current request is done: on to the next header, or NAK and fail the QP. */
  boolean finish(WcStatus result) {
    access.clear();
    if (result != WcStatus.SUCCESS) {
      pendingAckPsn = -1;
      tx.stage(ResponseFlyweight.TYPE_NAK, (byte) result.code(), psn, 0);
      return r.closeAfterTx(true);
    }
    if (op == RequestFlyweight.OP_READ) {
      pendingAckPsn = -1;
    } else if (ackReq) {
      pendingAckPsn = psn;
    }
    r.phase = Responder.HEADER;
    r.deadline = Responder.NO_DEADLINE;
    r.interestIn(SelectionKey.OP_READ);
    return true;
  }

  // ---- receive completions ----

  /**
   * Completes the oldest receive on the QP's CQ without waking its poller yet: a read batch's
   * completions are pushed in order as each request is executed, and {@link #wakeReceiver} wakes a
   * sleeping poller once for the run (at the end of the batch, before this thread reads or waits
   * again, and at least every {@link Responder#WAKE_EVERY} completions).
   */
  private void completeReceive(
      WcStatus status, WcOpcode opcode, int byteLength, boolean hasImm, int imm) {
    r.qp.receiveQueue().complete(status, opcode, byteLength, hasImm, imm);
    if (++unwokenCompletions >= Responder.WAKE_EVERY) {
      wakeReceiver();
    }
  }

  void wakeReceiver() {
    if (unwokenCompletions > 0) {
      unwokenCompletions = 0;
      r.qp.receiveQueue().wakePoller();
    }
  }
}
