package io.srdma.verbs.soft;

import io.srdma.verbs.QpState;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.internal.KeyTable;
import io.srdma.verbs.internal.RemoteAccess;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>This class keeps the lifecycle (attach, move to a hosted loop, close, terminate, join), the
 * dispatch of the phases ({@code step}), and what they wait for (interest set, deadline). The
 * phases are its collaborators', created once with it and driven on its thread: {@link
 * ResponderHandshake} (HELLO, RTR), {@link ResponderRequests} (headers, receives, ACK/NAK), {@link
 * ResponderPayload} (placing, discarding, READ data; the hosted budget) and {@link ResponderTx}
 * (staged responses). They share the state machine's fields below, package-private for them.
 */
final class Responder {
  /** The responder's one logger, its collaborators' too. */
  static final Logger LOG = LoggerFactory.getLogger(Responder.class);

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

  static final int HELLO = 0;
  static final int AWAIT_RTR = 1;
  static final int HEADER = 2;
  static final int AWAIT_RECEIVE = 3;
  static final int PLACE = 4;
  static final int SKIP = 5;
  static final int READ_OUT = 6;
  static final int DONE = 7;

  private final SoftDeviceContext ctx;
  private final SocketChannel channel;
  private volatile ResponderLoop loop; // changes once at most, by its driver: to a hosted loop
  private volatile ResponderLoop attachedTo; // the loop whose selector watches us, or null
  private ResponderLoop moveTo; // set while driving: move there when the drive ends
  private final ReadAhead readAhead = new ReadAhead();
  private final LockedMove move;
  private SelectionKey key;

  private final ResponderTx tx;
  private final ResponderHandshake handshake;
  private final ResponderPayload payload;
  final ResponderRequests requests; // ResponderPayload's, to go on once a payload is moved

  /** The attached queue pair, once the HELLO is checked; null before. */
  SoftQueuePair qp;

  int phase = HELLO;

  /** When the wait of the current phase times out, or {@link #NO_DEADLINE}. */
  long deadline;

  /**
   * Waiting for time (a receive, RTR), not bytes: retried every {@link
   * ResponderLoop#PARK_POLL_NANOS} (and, for a receive, as soon as one is posted).
   */
  private boolean parked;

  /** While {@link #parked}: when to look again. */
  private long pollAt;

  /** Once the responses are written: fail the QP (after a NAK) and/or drop the connection. */
  private boolean failQpAfterTx;

  private boolean closeAfterTx;

  private volatile boolean terminated;
  private final Object released = new Object();
  private boolean isReleased;

  Responder(SoftDeviceContext ctx, SocketChannel channel, ResponderLoop loop) {
    this.ctx = ctx;
    this.channel = channel;
    this.loop = loop;
    this.move = new LockedMove(channel);
    RequestFlyweight request = new RequestFlyweight();
    ResponseFlyweight response = new ResponseFlyweight();
    RemoteAccess<SoftProtectionDomain, SoftMemoryRegion, SoftMemoryWindow> access =
        new RemoteAccess<>(SoftMemoryRegion.class, SoftMemoryWindow.class);
    this.tx = new ResponderTx(this, channel, response);
    this.handshake = new ResponderHandshake(this, ctx, channel, readAhead, request, tx);
    KeyTable<Object> rkeys = ctx.rkeys();
    this.payload =
        new ResponderPayload(this, ctx, channel, readAhead, move, rkeys, access, response);
    this.requests =
        new ResponderRequests(this, ctx, channel, readAhead, request, rkeys, access, payload, tx);
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

  /** Whether a hosted loop's selector watches this responder (its driver's thread). */
  boolean onHostedLoop() {
    ResponderLoop a = attachedTo;
    return a != null && a.isHosted();
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
    requests.newDrive();
    payload.newDrive();
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
    requests.wakeReceiver(); // after a failure too: what was completed before it is reported
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
      if (tx.pending()) {
        if (!tx.flush()) {
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
            case HELLO -> handshake.hello();
            case AWAIT_RTR -> handshake.awaitRtr();
            case HEADER -> requests.header();
            case AWAIT_RECEIVE -> requests.awaitReceive();
            case PLACE -> payload.place();
            case SKIP -> payload.skip();
            case READ_OUT -> payload.readOut();
            default -> false;
          };
      if (!more) {
        return;
      }
    }
    terminate();
  }

  /**
   * The HELLO matched and {@code q} took this responder: requests from {@code firstPsn} on. Moves
   * to {@code q}'s receive queue's hosted loop, if it has one, once the HELLO's answer is written.
   */
  boolean attached(SoftQueuePair q, int firstPsn) {
    qp = q;
    requests.start(firstPsn);
    phase = HEADER;
    deadline = NO_DEADLINE;
    ResponderLoop hosted = q.recvCq().hostedLoop();
    if (hosted != null && hosted != loop) {
      moveTo = hosted; // once the HELLO's answer is written (this drive): before anyone polls
    }
    return true;
  }

  /** Once the staged responses are written: fail the QP if {@code failQp}, drop the connection. */
  boolean closeAfterTx(boolean failQp) {
    if (failQp) {
      failQpAfterTx = true;
    }
    closeAfterTx = true;
    phase = DONE;
    return true;
  }

  // ---- waiting ----

  /** Waits for {@code ops} until {@code until}; the caller returns false from its phase. */
  boolean waitFor(int ops, long until) {
    parked = false;
    deadline = until;
    interestIn(ops);
    if (until != NO_DEADLINE) {
      loop.wakeBy(until);
    }
    return false;
  }

  /** Waits for time: retried every park period until {@code until}. */
  boolean park(long until) {
    waitFor(0, until);
    parked = true;
    pollAt = System.nanoTime() + ResponderLoop.PARK_POLL_NANOS;
    loop.wakeBy(pollAt);
    return false;
  }

  /** Selects for {@code ops} from now on. */
  void interestIn(int ops) {
    if (key.interestOps() != ops) {
      key.interestOps(ops);
    }
  }

  /** Whether the selector waits for {@code ops}. */
  boolean interestedIn(int ops) {
    return key.interestOps() == ops;
  }

  static boolean passed(long until) {
    return System.nanoTime() - until >= 0;
  }

  long writeDeadline() {
    return System.nanoTime() + ctx.options().transportTimeout().toNanos();
  }

  String remoteName() {
    try {
      return String.valueOf(channel.getRemoteAddress());
    } catch (IOException e) {
      return "?";
    }
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
    return payload.copiedFromReadAhead();
  }

  /** Payload bytes of refused requests discarded so far (any thread; tests). */
  long payloadDiscarded() {
    return payload.discarded();
  }

  /** The read-ahead's current size (any thread; tests). */
  int readAheadCapacity() {
    return readAhead.capacity();
  }

  /**
   * Drops this connection if it still owes its handshake (acceptor thread, when too many do): it is
   * then no longer counted, and it never attaches to a queue pair.
   *
   * @return false when its handshake had ended (it is left alone)
   */
  boolean evict() {
    return handshake.evict();
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
    handshake.finished();
    if (key != null) {
      key.cancel();
    }
    Requester.closeQuietly(channel);
    if (qp != null) {
      requests.cancelWakeOnPost(qp); // an SRQ outlives its queue pairs
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
