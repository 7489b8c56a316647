package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.QpState;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.internal.KeyTable;
import io.srdma.verbs.internal.RemoteAccess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The responder of one incoming connection: the part of the software RNIC that executes a peer's
 * requests on registered memory. It, and never the target application, checks every access as an
 * RNIC does: rkey exists, PD of the region or window equals the QP's, a type-2 window is bound to
 * this QP, the rights allow the operation, and {@code [addr, addr+len)} lies inside the window and
 * the region (unsigned, overflow-safe; {@link RemoteAccess}). A violation answers a NAK, and both
 * QPs go to ERROR; nothing outside the region is ever touched. A malformed frame drops this
 * connection only.
 *
 * <p>The check is repeated before every chunk of a payload is placed (or of READ data is sent),
 * under the window's and the region's access locks, the locks that {@code LOCAL_INV}, window close
 * and region close take to change them ({@link LockedMove}): once those return, no further byte of
 * that key is moved. The socket is non-blocking, so the locks are held only for one non-blocking
 * copy, never while waiting for the peer. A payload that brings no new byte for {@link
 * io.srdma.verbs.DeviceOptions#payloadTimeout()} is answered with a NAK ({@code REM_OP_ERR}).
 *
 * <p>A responder is a state machine driven by one {@link ResponderLoop} thread, which multiplexes
 * many of them: {@link #drive()} does everything possible without blocking and returns, leaving the
 * interest set and the deadline of what it waits for. Once its HELLO is checked and its queue pair
 * attached, a responder whose queue pair reports receives to a completion queue of {@link
 * io.srdma.verbs.CompletionProgress#POLLER} moves to that queue's hosted loop (after this drive, so
 * one thread drives it at a time) and is driven by the queue's poller from then on; there a drive
 * reads at most {@link #HOSTED_READS} batches and moves at most {@link #HOSTED_BYTES} of payload,
 * so a streaming peer cannot hold the poller. Acknowledgements are cumulative: one ACK for the last
 * acknowledged request of all the requests one read brought. Only {@link #close()} and {@link
 * #join()} may be called from other threads.
 */
final class Responder {
  private static final Logger LOG = LoggerFactory.getLogger(Responder.class);

  private static final int TX_SIZE = 16 * ResponseFlyweight.LENGTH;

  /** Socket reads one drive on a hosted loop makes at most (the poller has completions to open). */
  static final int HOSTED_READS = 8;

  /**
   * Payload bytes one drive on a hosted loop moves at most (placed, discarded or sent as READ data)
   * before it lets the poller go on: a peer streaming one 1 GiB WRITE or READ cannot hold it. A
   * read straight into a region, a placement from the read-ahead, a write of READ data, and a
   * discard take no more than is left of it; once it is spent no more headers are read.
   */
  static final long HOSTED_BYTES = 1L << 20;

  /** A run of receive completions wakes a sleeping poller at least this often. */
  static final int WAKE_EVERY = 16;

  static final long NO_DEADLINE = Long.MAX_VALUE;

  private static final int HELLO = 0;
  private static final int AWAIT_RTR = 1;
  private static final int HEADER = 2;
  private static final int AWAIT_RECEIVE = 3;
  private static final int PLACE = 4;
  private static final int SKIP = 5;
  private static final int READ_OUT = 6;
  private static final int DONE = 7;

  private final SoftDeviceContext ctx;
  private final SocketChannel channel;
  private volatile ResponderLoop loop; // changes once at most, by its driver: to a hosted loop
  private volatile ResponderLoop attachedTo; // the loop whose selector watches us, or null
  private ResponderLoop moveTo; // set while driving: move there when the drive ends
  private int readsThisDrive;
  private long bytesThisDrive;
  private final ReadAhead readAhead = new ReadAhead();

  /** Responses not yet written, in fill mode. */
  private final ByteBuffer tx = ByteBuffer.allocateDirect(TX_SIZE);

  private final ByteBuffer readHeader = ByteBuffer.allocateDirect(ResponseFlyweight.LENGTH);
  private final ByteBuffer[] txGather = new ByteBuffer[2];
  private final RequestFlyweight request = new RequestFlyweight();
  private final ResponseFlyweight response = new ResponseFlyweight();
  private final ViewCache views;
  private final LockedMove move;
  private final KeyTable<Object> rkeys;
  private final RemoteAccess<SoftProtectionDomain, SoftMemoryRegion, SoftMemoryWindow> access =
      new RemoteAccess<>(SoftMemoryRegion.class, SoftMemoryWindow.class);
  private SelectionKey key;

  /** The QP a HELLO named, until the HELLO is checked against its peer and it is attached. */
  private SoftQueuePair candidate;

  /** The HELLO was answered before the QP reached RTR (so before it was checked). */
  private boolean helloAcked;

  private SoftQueuePair qp;
  private int expectedPsn;
  private int pendingAckPsn = -1;
  private int unwokenCompletions; // receive completions pushed since the last wakeReceiver()
  private int phase = HELLO;

  /**
   * Still owes its handshake (counted in the context's pending handshakes); cleared once, by this
   * responder or by the acceptor evicting it ({@link #evict}).
   */
  private final AtomicBoolean handshakeOpen = new AtomicBoolean(true);

  /** When the wait of the current phase times out, or {@link #NO_DEADLINE}. */
  private long deadline;

  // payload bytes placed from the read-ahead (a second copy); written by this thread only, with
  // release stores (a plain store on x86), so the hot path pays no fence for the tests' counter
  private final AtomicLong payloadCopied = new AtomicLong();
  private final AtomicLong payloadDiscarded = new AtomicLong();

  /**
   * Waiting for time (a receive, RTR), not bytes: retried every {@link
   * ResponderLoop#PARK_POLL_NANOS} (and, for a receive, as soon as one is posted: {@link #posted}).
   */
  private boolean parked;

  /** A wake-up is registered with the receive queue and has not run yet (at most one at a time). */
  private final AtomicBoolean awaitingPost = new AtomicBoolean();

  /** Run by the thread that posts the receive this responder waits for: drive it now. */
  private final Runnable posted = this::receivePosted;

  /** While {@link #parked}: when to look again. */
  private long pollAt;

  /** Once {@link #tx} is written: fail the QP (after a NAK) and/or drop the connection. */
  private boolean failQpAfterTx;

  private boolean closeAfterTx;

  // The request being executed.
  private byte op;
  private int psn;
  private int length;
  private int imm;
  private boolean ackReq;

  // The placement in progress: its window, binding and region; view.remaining() is still unread.
  private SoftMemoryWindow placeWindow;
  private SoftMemoryWindow.Binding<SoftMemoryRegion> placeBinding;
  private SoftMemoryRegion placeRegion;
  private ByteBuffer placeView;

  // A SEND being scattered over the receive's SGEs.
  private int recvSlot;
  private int recvSge;
  private int recvLeft;

  // A refused payload being discarded before the NAK.
  private int skipLeft;
  private WcStatus skipStatus;

  private volatile boolean terminated;
  private final Object released = new Object();
  private boolean isReleased;

  Responder(SoftDeviceContext ctx, SocketChannel channel, ResponderLoop loop) {
    this.ctx = ctx;
    this.channel = channel;
    this.loop = loop;
    this.move = new LockedMove(channel);
    this.views = new ViewCache(1 + SoftDeviceContext.MAX_SGE);
    this.rkeys = ctx.rkeys();
    deadline = System.nanoTime() + ctx.options().transportTimeout().toNanos();
  }

  /** Registers with the loop's selector (loop thread). */
  void attach(ResponderLoop owner) {
    if (terminated) {
      owner.remove(this); // closed while it was being handed over
      return;
    }
    if (move.isClosed()) {
      terminate();
      return;
    }
    try {
      channel.configureBlocking(false);
      key = channel.register(owner.selector(), SelectionKey.OP_READ, this);
    } catch (IOException e) {
      LOG.debug("soft responder: cannot watch an accepted connection: {}", e.toString());
      terminate();
      return;
    }
    attachedTo = owner;
    owner.wakeBy(deadline);
    drive();
  }

  /**
   * On a hosted loop, whether this drive moved its share of payload bytes ({@link #HOSTED_BYTES}).
   */
  private boolean hostedBudgetSpent() {
    return bytesThisDrive >= HOSTED_BYTES && attachedTo != null && attachedTo.isHosted();
  }

  /**
   * On a hosted loop, the payload bytes this drive may still move (0 once {@link #HOSTED_BYTES} are
   * moved); elsewhere, no limit.
   */
  private long hostedRoom() {
    if (attachedTo == null || !attachedTo.isHosted()) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, HOSTED_BYTES - bytesThisDrive);
  }

  /**
   * Cuts {@code b}'s limit so that one read into it or write from it moves no more than {@link
   * #hostedRoom}; returns the limit to put back after that read or write.
   */
  private int cutToHostedRoom(ByteBuffer b) {
    int limit = b.limit();
    long room = hostedRoom();
    if (room < b.remaining()) {
      b.limit(b.position() + (int) room);
    }
    return limit;
  }

  /** The loop that drives this responder (any thread; it changes at most once). */
  ResponderLoop owner() {
    return loop;
  }

  /** Whether {@code l}'s selector watches this responder (its driver's thread). */
  boolean isAttachedTo(ResponderLoop l) {
    return attachedTo == l;
  }

  /** When the loop must look at this responder without an I/O event, or {@link #NO_DEADLINE}. */
  long dueNanos() {
    if (move.isClosed() || terminated) {
      return terminated ? NO_DEADLINE : System.nanoTime();
    }
    if (parked) {
      // a fixed time, set when parking: one computed from "now" on every look would never be due
      return Math.min(deadline, pollAt);
    }
    return deadline;
  }

  /** Does all that can be done now without blocking (loop thread). */
  void drive() {
    if (terminated) {
      return;
    }
    readsThisDrive = 0;
    bytesThisDrive = 0;
    try {
      step();
    } catch (MalformedException e) {
      if (ctx.malformedConnection()) {
        LOG.warn(
            "soft responder {}: dropping connection from {}: {} ({} such connections so far)",
            ctx.device().name(),
            remoteName(),
            e.getMessage(),
            ctx.malformedConnections());
      } else {
        LOG.debug(
            "soft responder {}: dropping connection from {}: {}",
            ctx.device().name(),
            remoteName(),
            e.getMessage());
      }
      if (qp != null) {
        qp.fail(null);
      }
      terminate();
    } catch (IOException e) {
      // In RTS our own requester connection sees the peer's failure too, and in order after any
      // NAK it sent; failing here would race that NAK. Before RTS nothing else would notice.
      if (!move.isClosed() && qp != null && qp.state() != QpState.RTS) {
        LOG.debug(
            "QP 0x{}: incoming connection lost: {}", Integer.toHexString(qp.qpn()), e.toString());
        qp.fail(WcStatus.RETRY_EXC_ERR);
      }
      terminate();
    } catch (RuntimeException e) {
      LOG.error("soft responder {}: unexpected failure", ctx.device().name(), e);
      if (qp != null) {
        qp.fail(null);
      }
      terminate();
    }
    wakeReceiver(); // after a failure too: what was completed before it is reported
    if (moveTo != null) {
      moveNow();
    }
  }

  /**
   * Hands this responder to the hosted loop of its queue pair's receive queue: the last thing its
   * old driver does with it. From the hand-over on only the new loop's driver touches it; a poke or
   * close addressed to the old loop meanwhile is forwarded ({@link ResponderLoop}).
   */
  private void moveNow() {
    ResponderLoop to = moveTo;
    moveTo = null;
    if (terminated) {
      return;
    }
    ResponderLoop from = loop;
    if (key != null) {
      key.cancel();
      key = null;
    }
    attachedTo = null;
    from.remove(this);
    loop = to;
    to.adopt(this);
  }

  private void step() throws IOException {
    while (!move.isClosed()) {
      if (tx.position() > 0) {
        if (!flushTx()) {
          return;
        }
        if (failQpAfterTx) {
          qp.fail(null);
        }
        if (closeAfterTx) {
          terminate();
          return;
        }
      }
      if (moveTo != null) {
        return; // the HELLO's answer is out: the rest is the hosted loop's (drive moves it)
      }
      boolean more =
          switch (phase) {
            case HELLO -> hello();
            case AWAIT_RTR -> awaitRtr();
            case HEADER -> header();
            case AWAIT_RECEIVE -> awaitReceive();
            case PLACE -> place();
            case SKIP -> skip();
            case READ_OUT -> readOut();
            default -> false;
          };
      if (!more) {
        return;
      }
    }
    terminate();
  }

  // ---- waiting ----

  /** Waits for {@code ops} until {@code until}; the caller returns false from its phase. */
  private boolean waitFor(int ops, long until) {
    parked = false;
    deadline = until;
    if (key.interestOps() != ops) {
      key.interestOps(ops);
    }
    if (until != NO_DEADLINE) {
      loop.wakeBy(until);
    }
    return false;
  }

  /** Waits for time: retried every park period until {@code until}. */
  private boolean park(long until) {
    waitFor(0, until);
    parked = true;
    pollAt = System.nanoTime() + ResponderLoop.PARK_POLL_NANOS;
    loop.wakeBy(pollAt);
    return false;
  }

  private static boolean passed(long until) {
    return System.nanoTime() - until >= 0;
  }

  /** The largest the read-ahead has been on this connection (any thread; tests). */
  int readAheadPeak() {
    return readAhead.peak();
  }

  /**
   * Payload bytes placed from the read-ahead, i.e. copied once more than those read straight into
   * their region (any thread; tests).
   */
  long payloadCopiedFromReadAhead() {
    return payloadCopied.get();
  }

  /** Payload bytes of refused requests discarded so far (any thread; tests). */
  long payloadDiscarded() {
    return payloadDiscarded.get();
  }

  /** The read-ahead's current size (any thread; tests). */
  int readAheadCapacity() {
    return readAhead.capacity();
  }

  // ---- HELLO ----

  private boolean hello() throws IOException {
    if (readAhead.remaining() < RequestFlyweight.LENGTH) {
      if (readAhead.read(channel) > 0) {
        return true;
      }
      if (passed(deadline)) {
        LOG.debug("soft responder {}: no HELLO in time from {}", ctx.device().name(), remoteName());
        terminate();
        return false;
      }
      return waitFor(SelectionKey.OP_READ, deadline);
    }
    request.wrap(readAhead.buffer(), readAhead.buffer().position());
    if (request.version() != RequestFlyweight.VERSION
        || request.opcode() != RequestFlyweight.OP_HELLO
        || request.address() != RequestFlyweight.HELLO_MAGIC
        || !request.reservedZero()) {
      throw new MalformedException("not a HELLO frame");
    }
    int dst = request.rkey();
    int src = request.imm();
    psn = request.psn();
    imm = src;
    readAhead.consume(RequestFlyweight.LENGTH);
    SoftQueuePair found = ctx.qps().get(dst);
    if (found == null) {
      return refuseHello(ResponseFlyweight.HELLO_NAK_NO_QP);
    }
    // Not attached yet: anyone on the port may name a QPN, so the QP's one responder slot is
    // taken only once the HELLO matches the peer the QP was given at RTR. Until then this
    // connection still counts as a pending handshake (bounded) and cannot fail the QP. A QP not
    // in RTR yet is answered at once (its peer's RTS must not wait for our RTR: the sealed
    // channel's client reaches RTR only after the host's RTS); a stranger's connection is then
    // dropped at RTR, unattached.
    candidate = found;
    QpState s = found.state();
    if (s == QpState.RESET || s == QpState.INIT) {
      stage(ResponseFlyweight.TYPE_HELLO_ACK, (byte) 0, 0, 0);
      helloAcked = true;
    }
    phase = AWAIT_RTR;
    return true;
  }

  /**
   * Refuses a HELLO that cannot attach: a NAK when it was not answered yet, else (answered before
   * the QP's RTR) the connection is just dropped.
   */
  private boolean rejectHello(byte syndrome) {
    if (helloAcked) {
      terminate();
      return false;
    }
    return refuseHello(syndrome);
  }

  /** Answers a HELLO with a NAK and drops the connection; the named QP is left as it is. */
  private boolean refuseHello(byte syndrome) {
    handshakeFinished();
    stage(ResponseFlyweight.TYPE_HELLO_NAK, syndrome, 0, 0);
    closeAfterTx = true;
    phase = DONE;
    return true;
  }

  /** Ends this connection's pending handshake; false if it had ended already (or was evicted). */
  private boolean handshakeFinished() {
    if (handshakeOpen.compareAndSet(true, false)) {
      ctx.handshakeDone(this);
      return true;
    }
    return false;
  }

  /**
   * Drops this connection if it still owes its handshake (acceptor thread, when too many do): it is
   * then no longer counted, and it never attaches to a queue pair.
   *
   * @return false when its handshake had ended (it is left alone)
   */
  boolean evict() {
    if (!handshakeOpen.compareAndSet(true, false)) {
      return false;
    }
    ctx.handshakeDone(this);
    close();
    return true;
  }

  private boolean awaitRtr() throws IOException {
    SoftQueuePair q = candidate;
    QpState s = q.state();
    if (s == QpState.RESET || s == QpState.INIT) {
      if (passed(deadline)) {
        LOG.debug(
            "soft responder {}: QP 0x{} did not reach RTR in time for the HELLO from {}",
            ctx.device().name(),
            Integer.toHexString(q.qpn()),
            remoteName());
        terminate();
        return false;
      }
      return park(deadline);
    }
    if (s != QpState.RTR && s != QpState.RTS) {
      return rejectHello(ResponseFlyweight.HELLO_NAK_BUSY);
    }
    ConnectionInfo remote = q.remote();
    if (remote.qpn() != imm || remote.psn() != psn) {
      // Not the QP's peer: refused as if the QP did not exist (no oracle), and the QP is left
      // alone (a stranger who knows a QPN must not fail it).
      if (ctx.malformedConnection()) {
        LOG.warn(
            "soft responder {}: refusing a HELLO from {} that names a QP whose peer it is not"
                + " ({} such connections so far)",
            ctx.device().name(),
            remoteName(),
            ctx.malformedConnections());
      }
      return rejectHello(ResponseFlyweight.HELLO_NAK_NO_QP);
    }
    if (!handshakeFinished()) {
      terminate(); // evicted by the acceptor meanwhile (flood guard)
      return false;
    }
    if (!q.attachResponder(this)) {
      return rejectHello(ResponseFlyweight.HELLO_NAK_BUSY);
    }
    candidate = null;
    qp = q;
    if (!helloAcked) {
      stage(ResponseFlyweight.TYPE_HELLO_ACK, (byte) 0, 0, 0);
    }
    expectedPsn = psn;
    phase = HEADER;
    deadline = NO_DEADLINE;
    ResponderLoop hosted = q.recvCq().hostedLoop();
    if (hosted != null && hosted != loop) {
      moveTo = hosted; // once the HELLO's answer is written (this drive): before anyone polls
    }
    return true;
  }

  // ---- requests ----

  private boolean header() throws IOException {
    if (readAhead.remaining() < RequestFlyweight.LENGTH) {
      wakeReceiver(); // the read batch is executed: one wake-up for its receive completions
      if (pendingAckPsn >= 0) {
        // Everything read so far is executed: one cumulative ACK for it.
        stage(ResponseFlyweight.TYPE_ACK, (byte) 0, pendingAckPsn, 0);
        pendingAckPsn = -1;
        return true;
      }
      if (readAhead.takeShortRead()) {
        return waitFor(SelectionKey.OP_READ, readAhead.idle());
      }
      if (hostedBudgetSpent()) {
        // the payload bound is spent: what the socket holds keeps it selected for the next drive
        return waitFor(SelectionKey.OP_READ, NO_DEADLINE);
      }
      if (attachedTo != null && attachedTo.isHosted() && ++readsThisDrive > HOSTED_READS) {
        // the poller's turn to open what was placed; unread bytes keep the socket selected
        return waitFor(SelectionKey.OP_READ, NO_DEADLINE);
      }
      if (readAhead.read(channel) > 0) {
        return true;
      }
      return waitFor(SelectionKey.OP_READ, readAhead.idle());
    }
    request.wrap(readAhead.buffer(), readAhead.buffer().position());
    op = request.opcode();
    psn = request.psn();
    length = request.length();
    if (request.version() != RequestFlyweight.VERSION
        || !RequestFlyweight.isKnown(op)
        || !request.reservedZero()) {
      throw new MalformedException(
          "bad request header (version " + request.version() + ", opcode " + op + ")");
    }
    if (length < 0 || length > SoftDeviceContext.MAX_MESSAGE_SIZE) {
      throw new MalformedException(
          "request length " + Integer.toUnsignedString(length) + " above maximum");
    }
    if (psn != expectedPsn) {
      throw new MalformedException("PSN " + psn + " but expected " + expectedPsn);
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
        if (!access.resolve(rkeys, qp, rkey, address, length, AccessFlags.REMOTE_WRITE)) {
          return beginSkip(length, WcStatus.REM_ACCESS_ERR);
        }
        if (op == RequestFlyweight.OP_WRITE_IMM) {
          return enterAwaitReceive();
        }
        return beginPlace(
            0, access.window(), access.binding(), access.region(), access.offset(), length);
      }
      case RequestFlyweight.OP_SEND, RequestFlyweight.OP_SEND_IMM -> {
        return enterAwaitReceive();
      }
      default -> {
        return beginRead(address, rkey);
      }
    }
  }

  private boolean enterAwaitReceive() {
    phase = AWAIT_RECEIVE;
    deadline = System.nanoTime() + ctx.options().rnrTimeout().toNanos();
    return true;
  }

  /** A WRITE_WITH_IMM or SEND waits (bounded, without reading on) for a posted receive. */
  private boolean awaitReceive() throws IOException {
    int slot = postedReceive();
    if (slot < 0 && !passed(deadline) && awaitingPost.compareAndSet(false, true)) {
      qp.receiveQueue().wakeOnPost(posted);
      slot = postedReceive(); // a receive posted just before the registration is not missed
    }
    if (slot < 0) {
      if (passed(deadline)) {
        return beginSkip(length, WcStatus.RNR_RETRY_EXC_ERR);
      }
      return park(deadline);
    }
    if (op == RequestFlyweight.OP_WRITE_IMM) {
      return beginPlace(
          0, access.window(), access.binding(), access.region(), access.offset(), length);
    }
    return beginSend(slot);
  }

  private void receivePosted() {
    if (awaitingPost.compareAndSet(true, false)) {
      loop.poke(this);
    }
  }

  /** The slot of the oldest posted receive, or -1: a look, no wait. */
  private int postedReceive() throws IOException {
    try {
      return qp.receiveQueue().awaitHead(System.nanoTime() - 1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private boolean beginSend(int slot) {
    ReceiveQueue rq = qp.receiveQueue();
    long room = 0;
    for (int k = 0; k < rq.sges(slot); k++) {
      room += rq.length(slot, k);
      if (qp.resolveLocal(
              rq.address(slot, k), rq.length(slot, k), rq.lkey(slot, k), AccessFlags.LOCAL_WRITE)
          == null) {
        completeReceive(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
        return beginSkip(length, WcStatus.REM_OP_ERR);
      }
    }
    if (length > room) {
      completeReceive(WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0);
      return beginSkip(length, WcStatus.REM_INV_REQ_ERR);
    }
    recvSlot = slot;
    recvSge = 0;
    recvLeft = length;
    return nextSendSge();
  }

  private boolean nextSendSge() {
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
      return beginSkip(recvLeft, WcStatus.REM_OP_ERR);
    }
    return beginPlace(1 + k, null, null, mr, mr.offsetOf(rq.address(recvSlot, k), n), n);
  }

  /**
   * Starts moving {@code n} payload bytes from the connection into {@code mr} at {@code offset},
   * chunk by chunk, each chunk only after the re-check under the access locks ({@link LockedMove}).
   */
  private boolean beginPlace(
      int viewSlot,
      SoftMemoryWindow mw,
      SoftMemoryWindow.Binding<SoftMemoryRegion> b,
      SoftMemoryRegion mr,
      long offset,
      int n) {
    if (n == 0) {
      return placed(WcStatus.SUCCESS);
    }
    placeWindow = mw;
    placeBinding = b;
    placeRegion = mr;
    placeView = views.view(viewSlot, mr, offset, n);
    readAhead.payloadFollows(n);
    phase = PLACE;
    deadline = payloadDeadline();
    return true;
  }

  private boolean place() throws IOException {
    ByteBuffer view = placeView;
    while (view.hasRemaining()) {
      long moved;
      if (readAhead.remaining() > 0) {
        // Bytes already read with a header: nothing to wait for, copied under the locks. On a
        // hosted loop no more than this drive may still move: the rest waits in the read-ahead.
        int n = (int) Math.min(Math.min(readAhead.remaining(), view.remaining()), hostedRoom());
        if (n == 0) {
          // No socket event may announce bytes already read: due at once, for the next look.
          return waitFor(SelectionKey.OP_READ, System.nanoTime());
        }
        moved = move.chunk(placeWindow, placeBinding, placeRegion, readAhead.slice(n), view, null);
        if (moved != LockedMove.REVOKED) {
          readAhead.consume(n);
          payloadCopied.lazySet(payloadCopied.get() + n);
        }
      } else if (hostedBudgetSpent()) {
        return waitFor(SelectionKey.OP_READ, deadline); // the rest at the poller's next look
      } else {
        // One read takes what the socket holds, up to the whole view (megabytes once the kernel
        // has grown the receive buffer): on a hosted loop, no more than this drive may still move.
        int limit = cutToHostedRoom(view);
        try {
          moved = move.chunk(placeWindow, placeBinding, placeRegion, null, view, null);
        } finally {
          view.limit(limit);
        }
      }
      if (moved == LockedMove.REVOKED) {
        return placed(WcStatus.REM_ACCESS_ERR);
      }
      if (moved > 0) {
        bytesThisDrive += moved;
        deadline = payloadDeadline();
      } else if (passed(deadline)) {
        LOG.debug(
            "QP 0x{}: payload stalled with {} bytes to come",
            Integer.toHexString(qp.qpn()),
            view.remaining());
        return placed(WcStatus.REM_OP_ERR);
      } else {
        return waitFor(SelectionKey.OP_READ, deadline);
      }
    }
    return placed(WcStatus.SUCCESS);
  }

  /** A placement ended: SUCCESS, REM_ACCESS_ERR (revoked mid-payload) or REM_OP_ERR (stalled). */
  private boolean placed(WcStatus result) {
    int unread = placeView == null ? 0 : placeView.remaining();
    placeView = null;
    placeWindow = null;
    placeBinding = null;
    placeRegion = null;
    boolean send = op == RequestFlyweight.OP_SEND || op == RequestFlyweight.OP_SEND_IMM;
    if (result == WcStatus.REM_OP_ERR) {
      // Stalled: the NAK at once; a pending receive stays posted and is flushed with the QP.
      return finish(result);
    }
    if (result != WcStatus.SUCCESS) {
      if (!send) {
        // Revoked mid-payload: the rest is discarded so the NAK is read before the connection
        // closes; nothing more is placed.
        return beginSkip(unread, result);
      }
      // The receive buffer was deregistered during its part of the payload.
      int n = Math.min(recvLeft, qp.receiveQueue().length(recvSlot, recvSge));
      completeReceive(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
      return beginSkip(unread + recvLeft - n, WcStatus.REM_OP_ERR);
    }
    if (send) {
      int n = Math.min(recvLeft, qp.receiveQueue().length(recvSlot, recvSge));
      recvLeft -= n;
      recvSge++;
      return nextSendSge();
    }
    if (op == RequestFlyweight.OP_WRITE_IMM) {
      completeReceive(WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, length, true, imm);
    }
    return finish(WcStatus.SUCCESS);
  }

  /** Discards {@code left} payload bytes of a refused request, then answers {@code status}. */
  private boolean beginSkip(int left, WcStatus status) {
    skipLeft = left;
    skipStatus = status;
    phase = SKIP;
    deadline = payloadDeadline();
    return true;
  }

  private boolean skip() throws IOException {
    while (skipLeft > 0) {
      // On a hosted loop a discard moves no more than the drive may still: what the read-ahead
      // holds beyond that stays there, the rest of the payload in the socket, for the next drive.
      long room = hostedRoom();
      if (readAhead.remaining() > 0) {
        int n = (int) Math.min(Math.min(skipLeft, readAhead.remaining()), room);
        if (n == 0) {
          // No socket event may announce bytes already read: due at once, for the next look.
          return waitFor(SelectionKey.OP_READ, System.nanoTime());
        }
        readAhead.consume(n);
        skipLeft -= n;
        bytesThisDrive += n;
        payloadDiscarded.lazySet(payloadDiscarded.get() + n);
        deadline = payloadDeadline();
      } else if (room == 0) {
        return waitFor(SelectionKey.OP_READ, deadline); // the rest at the poller's next look
      } else if (readAhead.read(channel, (int) Math.min(room, Integer.MAX_VALUE)) > 0) {
        deadline = payloadDeadline();
      } else if (passed(deadline)) {
        // A refused payload that stalls still gets its NAK.
        LOG.debug("QP 0x{}: refused payload stalled", Integer.toHexString(qp.qpn()));
        break;
      } else {
        return waitFor(SelectionKey.OP_READ, deadline);
      }
    }
    return finish(skipStatus);
  }

  private boolean beginRead(long address, int rkey) {
    if (!access.resolve(rkeys, qp, rkey, address, length, AccessFlags.REMOTE_READ)) {
      return finish(WcStatus.REM_ACCESS_ERR);
    }
    response.wrap(readHeader, 0).encode(ResponseFlyweight.TYPE_READ_RESP, (byte) 0, psn, length);
    readHeader.clear();
    txGather[0] = readHeader;
    txGather[1] = length == 0 ? null : views.view(0, access.region(), access.offset(), length);
    phase = READ_OUT;
    deadline = writeDeadline();
    return true;
  }

  private boolean readOut() throws IOException {
    if (txGather[1] == null) {
      // Zero bytes: only the header, which touches no memory.
      while (readHeader.hasRemaining()) {
        if (channel.write(readHeader) > 0) {
          deadline = writeDeadline();
        } else if (passed(deadline)) {
          throw new IOException("peer did not read its RDMA READ response in time");
        } else {
          return waitFor(SelectionKey.OP_WRITE, deadline);
        }
      }
      txGather[0] = null;
      return finish(WcStatus.SUCCESS);
    }
    while (txGather[1].hasRemaining()) {
      if (hostedBudgetSpent()) {
        return waitFor(SelectionKey.OP_WRITE, deadline); // the rest at the poller's next look
      }
      // One write takes what the socket's send buffer has room for (megabytes once grown): on a
      // hosted loop, no more READ data than this drive may still move.
      ByteBuffer data = txGather[1];
      int limit = cutToHostedRoom(data);
      long n;
      try {
        n = move.chunk(access.window(), access.binding(), access.region(), null, null, txGather);
      } finally {
        data.limit(limit);
      }
      if (n == LockedMove.REVOKED && readHeader.position() == 0) {
        releaseRead();
        return finish(WcStatus.REM_ACCESS_ERR); // invalidated before a byte of the response left
      }
      if (n == LockedMove.REVOKED) {
        // The READ_RESP header promised more bytes: the connection cannot be resynchronised, so
        // it is dropped and the QP fails (the requester sees its READ fail).
        releaseRead();
        throw new MalformedException("key revoked during an RDMA READ response");
      }
      if (n > 0) {
        bytesThisDrive += n;
        deadline = writeDeadline();
      } else if (passed(deadline)) {
        releaseRead();
        throw new IOException("peer did not read its RDMA READ response in time");
      } else {
        return waitFor(SelectionKey.OP_WRITE, deadline);
      }
    }
    releaseRead();
    return finish(WcStatus.SUCCESS);
  }

  private void releaseRead() {
    txGather[0] = null;
    txGather[1] = null;
  }

  /** The current request is done: on to the next header, or NAK and fail the QP. */
  private boolean finish(WcStatus result) {
    access.clear();
    if (result != WcStatus.SUCCESS) {
      pendingAckPsn = -1;
      stage(ResponseFlyweight.TYPE_NAK, (byte) result.code(), psn, 0);
      failQpAfterTx = true;
      closeAfterTx = true;
      phase = DONE;
      return true;
    }
    if (op == RequestFlyweight.OP_READ) {
      pendingAckPsn = -1;
    } else if (ackReq) {
      pendingAckPsn = psn;
    }
    phase = HEADER;
    deadline = NO_DEADLINE;
    if (key.interestOps() != SelectionKey.OP_READ) {
      key.interestOps(SelectionKey.OP_READ);
    }
    return true;
  }

  // ---- receive completions ----

  /**
   * Completes the oldest receive on the QP's CQ without waking its poller yet: a read batch's
   * completions are pushed in order as each request is executed, and {@link #wakeReceiver} wakes a
   * sleeping poller once for the run (at the end of the batch, before this thread reads or waits
   * again, and at least every {@link #WAKE_EVERY} completions).
   */
  private void completeReceive(
      WcStatus status, WcOpcode opcode, int byteLength, boolean hasImm, int imm) {
    qp.receiveQueue().complete(status, opcode, byteLength, hasImm, imm);
    if (++unwokenCompletions >= WAKE_EVERY) {
      wakeReceiver();
    }
  }

  private void wakeReceiver() {
    if (unwokenCompletions > 0) {
      unwokenCompletions = 0;
      qp.receiveQueue().wakePoller();
    }
  }

  // ---- responses ----

  private void stage(byte type, byte syndrome, int responsePsn, int responseLength) {
    response.wrap(tx, tx.position()).encode(type, syndrome, responsePsn, responseLength);
    tx.position(tx.position() + ResponseFlyweight.LENGTH);
  }

  /**
   * Writes the staged responses.
   *
   * @return true when all are written; false when waiting for the socket (bounded)
   */
  private boolean flushTx() throws IOException {
    tx.flip();
    int n;
    try {
      n = channel.write(tx);
    } finally {
      tx.compact();
    }
    if (tx.position() == 0) {
      if (phase == HEADER && deadline != NO_DEADLINE) {
        deadline = NO_DEADLINE;
      }
      return true;
    }
    if (n > 0 || key.interestOps() != SelectionKey.OP_WRITE) {
      // Progress (or the first try): a fresh bound for the peer to read its responses.
      return waitFor(SelectionKey.OP_WRITE, writeDeadline());
    }
    if (passed(deadline)) {
      throw new IOException("peer did not read its responses in time");
    }
    return waitFor(SelectionKey.OP_WRITE, deadline);
  }

  private long payloadDeadline() {
    return System.nanoTime() + ctx.options().payloadTimeout().toNanos();
  }

  private long writeDeadline() {
    return System.nanoTime() + ctx.options().transportTimeout().toNanos();
  }

  private String remoteName() {
    try {
      return String.valueOf(channel.getRemoteAddress());
    } catch (IOException e) {
      return "?";
    }
  }

  /** Stops this responder (any thread): no byte is moved after this returns. */
  void close() {
    move.close();
    Requester.closeQuietly(channel);
    ResponderLoop l = loop;
    if (l.inLoop()) {
      terminate();
    } else {
      l.closeLater(this);
    }
  }

  /** Drops the connection and leaves the loop (loop thread, or after the loop stopped). */
  void terminate() {
    if (terminated) {
      return;
    }
    terminated = true;
    move.close();
    phase = DONE;
    handshakeFinished();
    if (key != null) {
      key.cancel();
    }
    Requester.closeQuietly(channel);
    if (qp != null && awaitingPost.getAndSet(false)) {
      qp.receiveQueue().cancelWakeOnPost(posted); // an SRQ outlives its queue pairs
    }
    moveTo = null;
    attachedTo = null;
    loop.remove(this);
    ctx.forget(this);
    synchronized (released) {
      isReleased = true;
      released.notifyAll();
    }
  }

  /** Waits (bounded) until the loop has let go of this responder. */
  void join() {
    if (loop.inLoop()) {
      return;
    }
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    synchronized (released) {
      while (!isReleased) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          return;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(released, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** A frame that breaks the protocol; the connection is dropped. */
  static final class MalformedException extends IOException {
    private static final long serialVersionUID = 1L;

    MalformedException(String message) {
      super(message);
    }
  }
}
