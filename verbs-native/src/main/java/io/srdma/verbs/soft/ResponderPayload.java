package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.internal.KeyTable;
import io.srdma.verbs.internal.RemoteAccess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Responder}'s payload moves: a WRITE's or SEND's payload placed into registered memory
 * (from the read-ahead, or read straight into the region), a refused payload discarded before its
 * NAK, and an RDMA READ's data written to the peer. Every chunk is moved only after the access is
 * re-checked under the access locks ({@link LockedMove}). On a hosted loop one drive moves at most
 * {@link Responder#HOSTED_BYTES} of payload in all ({@link #hostedRoom}). One per responder, driven
 * by its loop thread only (the counters are read by tests from any thread); allocates nothing after
 * construction.
 */
final class ResponderPayload {
  private final Responder r;
  private final SoftDeviceContext ctx;
  private final SocketChannel channel;
  private final ReadAhead readAhead;
  private final LockedMove move;
  private final KeyTable<Object> rkeys;
  private final RemoteAccess<SoftProtectionDomain, SoftMemoryRegion, SoftMemoryWindow> access;
  private final ResponseFlyweight response;
  private final ViewCache views = new ViewCache(1 + SoftDeviceContext.MAX_SGE);
  private final ByteBuffer readHeader = ByteBuffer.allocateDirect(ResponseFlyweight.LENGTH);
  private final ByteBuffer[] txGather = new ByteBuffer[2];

  /** Payload bytes this drive moved (placed, discarded or sent as READ data). */
  private long bytesThisDrive;

  // payload bytes placed from the read-ahead (a second copy); written by this thread only, with
  // release stores (a plain store on x86), so the hot path pays no fence for the tests' counter
  private final AtomicLong payloadCopied = new AtomicLong();
  private final AtomicLong payloadDiscarded = new AtomicLong();

  // The placement in progress: its window, binding and region; view.remaining() is still unread.
  private SoftMemoryWindow placeWindow;
  private SoftMemoryWindow.Binding<SoftMemoryRegion> placeBinding;
  private SoftMemoryRegion placeRegion;
  private ByteBuffer placeView;

  // A refused payload being discarded before the NAK.
  private int skipLeft;
  private WcStatus skipStatus;

  ResponderPayload(
      Responder r,
      SoftDeviceContext ctx,
      SocketChannel channel,
      ReadAhead readAhead,
      LockedMove move,
      KeyTable<Object> rkeys,
      RemoteAccess<SoftProtectionDomain, SoftMemoryRegion, SoftMemoryWindow> access,
      ResponseFlyweight response) {
    this.r = r;
    this.ctx = ctx;
    this.channel = channel;
    this.readAhead = readAhead;
    this.move = move;
    this.rkeys = rkeys;
    this.access = access;
    this.response = response;
  }

  /** A drive begins: its hosted budget is whole again. */
  void newDrive() {
    bytesThisDrive = 0;
  }

  /**
   * On a hosted loop, whether this drive moved its share of payload bytes ({@link
   * Responder#HOSTED_BYTES}).
   */
  boolean hostedBudgetSpent() {
    return bytesThisDrive >= Responder.HOSTED_BYTES && r.onHostedLoop();
  }

  /**
   * On a hosted loop, the payload bytes this drive may still move (0 once {@link
   * Responder#HOSTED_BYTES} are moved); elsewhere, no limit.
   */
  private long hostedRoom() {
    if (!r.onHostedLoop()) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, Responder.HOSTED_BYTES - bytesThisDrive);
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

  /** Payload bytes placed from the read-ahead (any thread; tests). */
  long copiedFromReadAhead() {
    return payloadCopied.get();
  }

  /** Payload bytes of refused requests discarded so far (any thread; tests). */
  long discarded() {
    return payloadDiscarded.get();
  }

  /**
   * Starts moving {@code n} payload bytes from the connection into {@code mr} at {@code offset},
   * chunk by chunk, each chunk only after the re-check under the access locks ({@link LockedMove}).
   */
  boolean beginPlace(
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
    r.phase = Responder.PLACE;
    r.deadline = payloadDeadline();
    return true;
  }

  boolean place() throws IOException {
    ByteBuffer view = placeView;
    while (view.hasRemaining()) {
      long moved;
      if (readAhead.remaining() > 0) {
        // Bytes already read with a header: nothing to wait for, copied under the locks. On a
        // hosted loop no more than this drive may still move: the rest waits in the read-ahead.
        int n = (int) Math.min(Math.min(readAhead.remaining(), view.remaining()), hostedRoom());
        if (n == 0) {
          // No socket event may announce bytes already read: due at once, for the next look.
          return r.waitFor(SelectionKey.OP_READ, System.nanoTime());
        }
        moved = move.chunk(placeWindow, placeBinding, placeRegion, readAhead.slice(n), view, null);
        if (moved != LockedMove.REVOKED) {
          readAhead.consume(n);
          payloadCopied.lazySet(payloadCopied.get() + n);
        }
      } else if (hostedBudgetSpent()) {
        return r.waitFor(SelectionKey.OP_READ, r.deadline); // the rest at the poller's next look
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
        r.deadline = payloadDeadline();
      } else if (Responder.passed(r.deadline)) {
        Responder.LOG.debug(
            "QP 0x{}: payload stalled with {} bytes to come",
            Integer.toHexString(r.qp.qpn()),
            view.remaining());
        return placed(WcStatus.REM_OP_ERR);
      } else {
        return r.waitFor(SelectionKey.OP_READ, r.deadline);
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
    return r.requests.placed(result, unread);
  }

  /** Discards {@code left} payload bytes of a refused request, then answers {@code status}. */
  boolean beginSkip(int left, WcStatus status) {
    skipLeft = left;
    skipStatus = status;
    r.phase = Responder.SKIP;
    r.deadline = payloadDeadline();
    return true;
  }

  boolean skip() throws IOException {
    while (skipLeft > 0) {
      // On a hosted loop a discard moves no more than the drive may still: what the read-ahead
      // holds beyond that stays there, the rest of the payload in the socket, for the next drive.
      long room = hostedRoom();
      if (readAhead.remaining() > 0) {
        int n = (int) Math.min(Math.min(skipLeft, readAhead.remaining()), room);
        if (n == 0) {
          // No socket event may announce bytes already read: due at once, for the next look.
          return r.waitFor(SelectionKey.OP_READ, System.nanoTime());
        }
        readAhead.consume(n);
        skipLeft -= n;
        bytesThisDrive += n;
        payloadDiscarded.lazySet(payloadDiscarded.get() + n);
        r.deadline = payloadDeadline();
      } else if (room == 0) {
        return r.waitFor(SelectionKey.OP_READ, r.deadline); // the rest at the poller's next look
      } else if (readAhead.read(channel, (int) Math.min(room, Integer.MAX_VALUE)) > 0) {
        r.deadline = payloadDeadline();
      } else if (Responder.passed(r.deadline)) {
        // A refused payload that stalls still gets its NAK.
        Responder.LOG.debug("QP 0x{}: refused payload stalled", Integer.toHexString(r.qp.qpn()));
        break;
      } else {
        return r.waitFor(SelectionKey.OP_READ, r.deadline);
      }
    }
    return r.requests.finish(skipStatus);
  }

  /** Starts an RDMA READ's response: its header, then {@code length} bytes of the region. */
  boolean beginRead(long address, int rkey, int psn, int length) {
    if (!access.resolve(rkeys, r.qp, rkey, address, length, AccessFlags.REMOTE_READ)) {
      return r.requests.finish(WcStatus.REM_ACCESS_ERR);
    }
    response.wrap(readHeader, 0).encode(ResponseFlyweight.TYPE_READ_RESP, (byte) 0, psn, length);
    readHeader.clear();
    txGather[0] = readHeader;
    txGather[1] = length == 0 ? null : views.view(0, access.region(), access.offset(), length);
    r.phase = Responder.READ_OUT;
    r.deadline = r.writeDeadline();
    return true;
  }

  boolean readOut() throws IOException {
    if (txGather[1] == null) {
      // Zero bytes: only the header, which touches no memory.
      while (readHeader.hasRemaining()) {
        if (channel.write(readHeader) > 0) {
          r.deadline = r.writeDeadline();
        } else if (Responder.passed(r.deadline)) {
          throw new IOException("peer did not read its RDMA READ response in time");
        } else {
          return r.waitFor(SelectionKey.OP_WRITE, r.deadline);
        }
      }
      txGather[0] = null;
      return r.requests.finish(WcStatus.SUCCESS);
    }
    while (txGather[1].hasRemaining()) {
      if (hostedBudgetSpent()) {
        return r.waitFor(SelectionKey.OP_WRITE, r.deadline); // the rest at the poller's next look
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
        // invalidated before a byte of the response left
        releaseRead();
        return r.requests.finish(WcStatus.REM_ACCESS_ERR);
      }
      if (n == LockedMove.REVOKED) {
        // The READ_RESP header promised more bytes: the connection cannot be resynchronised, so
        // it is dropped and the QP fails (the requester sees its READ fail).
        releaseRead();
        throw new Responder.MalformedException("key revoked during an RDMA READ response");
      }
      if (n > 0) {
        bytesThisDrive += n;
        r.deadline = r.writeDeadline();
      } else if (Responder.passed(r.deadline)) {
        releaseRead();
        throw new IOException("peer did not read its RDMA READ response in time");
      } else {
        return r.waitFor(SelectionKey.OP_WRITE, r.deadline);
      }
    }
    releaseRead();
    return r.requests.finish(WcStatus.SUCCESS);
  }

  private long payloadDeadline() {
    return System.nanoTime() + ctx.options().payloadTimeout().toNanos();
  }

  private void releaseRead() {
    txGather[0] = null;
    txGather[1] = null;
  }
}
