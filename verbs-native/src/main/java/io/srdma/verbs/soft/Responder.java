package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.QpState;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The responder of one incoming connection: the part of the software RNIC that executes a peer's
 * requests on registered memory. It, and never the target application, checks every access as an
 * RNIC does: rkey exists, PD of the region or window equals the QP's, a type-2 window is bound to
 * this QP, the rights allow the operation, and {@code [addr, addr+len)} lies inside the window and
 * the region (unsigned, overflow-safe). A violation answers a NAK, and both QPs go to ERROR;
 * nothing outside the region is ever touched. A malformed frame drops this connection only.
 *
 * <p>The check is repeated before every chunk of a payload is placed (or of READ data is sent),
 * under the window's and the region's access locks, the locks that {@code LOCAL_INV}, window close
 * and region close take to change them: once those return, no further byte of that key is moved.
 * The socket is non-blocking, so the locks are held only for one non-blocking copy, never while
 * waiting for the peer. A payload that brings no new byte for {@link
 * io.srdma.verbs.DeviceOptions#payloadTimeout()} is answered with a NAK ({@code REM_OP_ERR}).
 */
final class Responder implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Responder.class);
  private static final int RX_SIZE = 64 * 1024;
  private static final long NO_DEADLINE = Long.MAX_VALUE;
  private static final long IDLE_WAKE_MS = 1000;

  /** {@link #moveChunk} result: the access is no longer valid; nothing was moved. */
  private static final int REVOKED = -2;

  private final SoftDeviceContext ctx;
  private final SocketChannel channel;
  private final ByteBuffer rx = ByteBuffer.allocateDirect(RX_SIZE);
  private final ByteBuffer tx = ByteBuffer.allocateDirect(ResponseFlyweight.LENGTH);
  private final ByteBuffer[] txGather = new ByteBuffer[2];
  private final RequestFlyweight request = new RequestFlyweight();
  private final ResponseFlyweight response = new ResponseFlyweight();
  private final ViewCache views;
  private final Thread thread;
  private SoftQueuePair qp;
  private int expectedPsn;
  private int pendingAckPsn = -1;
  private SoftMemoryRegion target;
  private long targetOffset;

  /** The window the current access goes through and the binding it resolved, or null. */
  private SoftMemoryWindow targetWindow;

  private SoftMemoryWindow.Binding targetBinding;

  /** Payload bytes of the current request not read from the connection yet. */
  private int unread;

  private volatile Selector selector;
  private SelectionKey key;
  private volatile boolean closed;

  Responder(SoftDeviceContext ctx, SocketChannel channel) {
    this.ctx = ctx;
    this.channel = channel;
    this.views = new ViewCache(1 + SoftDeviceContext.MAX_SGE);
    rx.limit(0);
    thread = new Thread(this, "srdma-soft-resp-new");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  @Override
  public void run() {
    try {
      channel.configureBlocking(false);
      Selector sel = Selector.open();
      selector = sel;
      key = channel.register(sel, SelectionKey.OP_READ);
      if (hello()) {
        serve();
      }
    } catch (MalformedException e) {
      LOG.warn(
          "soft responder {}: dropping connection from {}: {}",
          ctx.device().name(),
          remoteName(),
          e.getMessage());
      if (qp != null) {
        qp.fail(null);
      }
    } catch (IOException e) {
      // In RTS our own requester connection sees the peer's failure too, and in order after any
      // NAK it sent; failing here would race that NAK. Before RTS nothing else would notice.
      if (!closed && qp != null && qp.state() != QpState.RTS) {
        LOG.debug(
            "QP 0x{}: incoming connection lost: {}", Integer.toHexString(qp.qpn()), e.toString());
        qp.fail(WcStatus.RETRY_EXC_ERR);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      close();
      Selector sel = selector;
      if (sel != null) {
        try {
          sel.close();
        } catch (IOException e) {
          LOG.debug("closing a responder selector: {}", e.toString());
        }
      }
      ctx.forget(this);
    }
  }

  /** Reads the HELLO (within the transport timeout) and attaches to the named QP. */
  private boolean hello() throws IOException {
    ScheduledFuture<?> guard = ctx.schedule(this::close, ctx.options().transportTimeout());
    try {
      fill(RequestFlyweight.LENGTH, NO_DEADLINE);
    } finally {
      guard.cancel(false);
      ctx.handshakeDone();
    }
    request.wrap(rx, rx.position());
    if (request.version() != RequestFlyweight.VERSION
        || request.opcode() != RequestFlyweight.OP_HELLO
        || request.address() != RequestFlyweight.HELLO_MAGIC
        || !request.reservedZero()) {
      throw new MalformedException("not a HELLO frame");
    }
    int dst = request.rkey();
    int src = request.imm();
    int psn = request.psn();
    rx.position(rx.position() + RequestFlyweight.LENGTH);
    SoftQueuePair found = ctx.qps().get(dst);
    if (found == null || !found.attachResponder(this)) {
      sendResponse(
          ResponseFlyweight.TYPE_HELLO_NAK,
          found == null ? ResponseFlyweight.HELLO_NAK_NO_QP : ResponseFlyweight.HELLO_NAK_BUSY,
          0,
          0);
      return false;
    }
    qp = found;
    thread.setName(String.format("srdma-soft-resp-qp%06x", qp.qpn()));
    sendResponse(ResponseFlyweight.TYPE_HELLO_ACK, (byte) 0, 0, 0);
    long deadline = System.nanoTime() + ctx.options().transportTimeout().toNanos();
    try {
      if (!qp.awaitReadyToReceive(deadline)) {
        throw new MalformedException(
            "QP 0x" + Integer.toHexString(dst) + " did not reach RTR in time");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    ConnectionInfo remote = qp.remote();
    if (remote.qpn() != src || remote.psn() != psn) {
      throw new MalformedException(
          "HELLO from QP 0x"
              + Integer.toHexString(src)
              + " but QP expects its peer 0x"
              + Integer.toHexString(remote.qpn()));
    }
    expectedPsn = psn;
    return true;
  }

  private void serve() throws IOException, InterruptedException {
    while (!closed) {
      if (rx.remaining() < RequestFlyweight.LENGTH) {
        flushAck();
      }
      fill(RequestFlyweight.LENGTH, NO_DEADLINE);
      request.wrap(rx, rx.position());
      byte op = request.opcode();
      int psn = request.psn();
      int length = request.length();
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
      boolean ackReq = (request.flags() & RequestFlyweight.FLAG_ACK_REQ) != 0;
      int imm = request.imm();
      long address = request.address();
      int rkey = request.rkey();
      rx.position(rx.position() + RequestFlyweight.LENGTH);
      WcStatus result =
          switch (op) {
            case RequestFlyweight.OP_WRITE, RequestFlyweight.OP_WRITE_IMM ->
                write(op == RequestFlyweight.OP_WRITE_IMM, address, rkey, length, imm);
            case RequestFlyweight.OP_SEND, RequestFlyweight.OP_SEND_IMM ->
                send(op == RequestFlyweight.OP_SEND_IMM, length, imm);
            default -> read(psn, address, rkey, length);
          };
      if (result != WcStatus.SUCCESS) {
        pendingAckPsn = -1;
        sendResponse(ResponseFlyweight.TYPE_NAK, (byte) result.code(), psn, 0);
        qp.fail(null);
        return;
      }
      if (op == RequestFlyweight.OP_READ) {
        pendingAckPsn = -1;
      } else if (ackReq) {
        pendingAckPsn = psn;
      }
    }
  }

  private WcStatus write(boolean withImm, long address, int rkey, int length, int imm)
      throws IOException, InterruptedException {
    if (!resolveRemote(rkey, address, length, AccessFlags.REMOTE_WRITE)) {
      return skipped(length, WcStatus.REM_ACCESS_ERR);
    }
    int slot = -1;
    if (withImm) {
      slot = qp.receiveQueue().awaitHead(rnrDeadline());
      if (slot < 0) {
        return skipped(length, WcStatus.RNR_RETRY_EXC_ERR);
      }
    }
    if (length > 0) {
      WcStatus placed = receiveInto(0, targetWindow, targetBinding, target, targetOffset, length);
      if (placed != WcStatus.SUCCESS) {
        // Revoked mid-payload (the rest is discarded so the NAK is read before the connection
        // closes) or stalled (the NAK at once): nothing more is placed; a pending receive stays
        // posted and is flushed when the QP enters ERROR.
        return placed == WcStatus.REM_OP_ERR ? placed : skipped(unread, placed);
      }
    }
    if (withImm) {
      qp.receiveQueue().complete(WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, length, true, imm);
    }
    return WcStatus.SUCCESS;
  }

  /**
   * Discards the {@code left} unread payload bytes of a refused request (so the NAK is read before
   * the connection closes) and returns {@code status}; a payload that stalls while being discarded
   * still gets its NAK.
   */
  private WcStatus skipped(int left, WcStatus status) throws IOException {
    skip(left);
    return status;
  }

  private WcStatus send(boolean withImm, int length, int imm)
      throws IOException, InterruptedException {
    ReceiveQueue rq = qp.receiveQueue();
    int slot = rq.awaitHead(rnrDeadline());
    if (slot < 0) {
      return skipped(length, WcStatus.RNR_RETRY_EXC_ERR);
    }
    long room = 0;
    for (int k = 0; k < rq.sges(slot); k++) {
      room += rq.length(slot, k);
      if (qp.resolveLocal(
              rq.address(slot, k), rq.length(slot, k), rq.lkey(slot, k), AccessFlags.LOCAL_WRITE)
          == null) {
        rq.complete(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
        return skipped(length, WcStatus.REM_OP_ERR);
      }
    }
    if (length > room) {
      rq.complete(WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0);
      return skipped(length, WcStatus.REM_INV_REQ_ERR);
    }
    int left = length;
    for (int k = 0; k < rq.sges(slot) && left > 0; k++) {
      int n = Math.min(left, rq.length(slot, k));
      SoftMemoryRegion mr =
          qp.resolveLocal(rq.address(slot, k), n, rq.lkey(slot, k), AccessFlags.LOCAL_WRITE);
      WcStatus placed =
          mr == null
              ? WcStatus.LOC_PROT_ERR
              : receiveInto(1 + k, null, null, mr, mr.offsetOf(rq.address(slot, k), n), n);
      if (placed == WcStatus.REM_OP_ERR) {
        return placed; // stalled: the receive is flushed when the QP enters ERROR
      }
      if (placed != WcStatus.SUCCESS) {
        // The receive buffer was deregistered before or during its part of the payload.
        rq.complete(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
        return skipped(mr == null ? left : unread + left - n, WcStatus.REM_OP_ERR);
      }
      left -= n;
    }
    rq.complete(WcStatus.SUCCESS, WcOpcode.RECV, length, withImm, imm);
    return WcStatus.SUCCESS;
  }

  private WcStatus read(int psn, long address, int rkey, int length) throws IOException {
    if (!resolveRemote(rkey, address, length, AccessFlags.REMOTE_READ)) {
      return WcStatus.REM_ACCESS_ERR;
    }
    response.wrap(tx, 0).encode(ResponseFlyweight.TYPE_READ_RESP, (byte) 0, psn, length);
    tx.clear();
    if (length == 0) {
      writeFully(tx);
      return WcStatus.SUCCESS;
    }
    txGather[0] = tx;
    txGather[1] = views.view(0, target, targetOffset, length);
    try {
      long deadline = writeDeadline();
      while (txGather[1].hasRemaining()) {
        long n = moveChunk(targetWindow, targetBinding, target, null, null, txGather);
        if (n == REVOKED && tx.position() == 0) {
          return WcStatus.REM_ACCESS_ERR; // invalidated before a byte of the response left
        }
        if (n == REVOKED) {
          // The READ_RESP header promised more bytes: the connection cannot be resynchronised, so
          // it is dropped and the QP fails (the requester sees its READ fail).
          throw new MalformedException("key revoked during an RDMA READ response");
        }
        if (n > 0) {
          deadline = writeDeadline();
        } else if (!await(SelectionKey.OP_WRITE, deadline)) {
          throw new IOException("peer did not read its RDMA READ response in time");
        }
      }
    } finally {
      txGather[1] = null;
    }
    return WcStatus.SUCCESS;
  }

  /**
   * The RNIC access check. On success {@link #target} and {@link #targetOffset} name the bytes. A
   * zero-length RDMA READ or WRITE touches no memory, so its R_Key and address are not validated
   * (InfiniBand C9-88), as rxe does; a WRITE_WITH_IMM of zero bytes still consumes a receive.
   */
  private boolean resolveRemote(int rkey, long address, int length, int right) {
    target = null;
    targetOffset = 0;
    targetWindow = null;
    targetBinding = null;
    if (length == 0) {
      return true;
    }
    if (!AccessFlags.has(qp.accessFlags(), right)) {
      return false;
    }
    Object o = ctx.rkeys().get(rkey);
    if (o instanceof SoftMemoryRegion mr) {
      if (mr.pd() != qp.pd() || mr.isClosed() || !AccessFlags.has(mr.access(), right)) {
        return false;
      }
      return resolved(mr, mr.offsetOf(address, length));
    }
    if (o instanceof SoftMemoryWindow mw) {
      SoftMemoryWindow.Binding b = mw.binding();
      if (b == null
          || b.rkey() != rkey
          || mw.pd() != qp.pd()
          || b.qpn() != qp.qpn()
          || !AccessFlags.has(b.access(), right)
          || b.region().isClosed()
          || SoftMemoryRegion.rangeOffset(b.address(), b.length(), address, length) < 0) {
        return false;
      }
      if (!resolved(b.region(), b.region().offsetOf(address, length))) {
        return false;
      }
      targetWindow = mw;
      targetBinding = b;
      return true;
    }
    return false;
  }

  private boolean resolved(SoftMemoryRegion mr, long offset) {
    if (offset < 0) {
      return false;
    }
    target = mr;
    targetOffset = offset;
    return true;
  }

  private long rnrDeadline() {
    return System.nanoTime() + ctx.options().rnrTimeout().toNanos();
  }

  /**
   * Moves {@code length} payload bytes from the connection into {@code mr} at {@code offset}, chunk
   * by chunk, each chunk only after {@link #stillValid} under the access locks.
   *
   * @param mw the window the access goes through, or null for a region's own key (or an lkey)
   * @param b the binding of {@code mw} resolved at the request header
   * @return SUCCESS; REM_ACCESS_ERR when the key was invalidated or the region closed mid-payload;
   *     REM_OP_ERR when the payload stalled; then {@link #unread} bytes are still on the connection
   */
  private WcStatus receiveInto(
      int viewSlot,
      SoftMemoryWindow mw,
      SoftMemoryWindow.Binding b,
      SoftMemoryRegion mr,
      long offset,
      int length)
      throws IOException {
    unread = length;
    int buffered = Math.min(rx.remaining(), length);
    if (buffered > 0) {
      ByteBuffer view = views.view(viewSlot, mr, offset, buffered);
      ByteBuffer staged = rx.duplicate();
      staged.limit(rx.position() + buffered);
      // Bytes already read with the header: nothing to wait for, copied under the locks.
      if (moveChunk(mw, b, mr, staged, view, null) == REVOKED) {
        return WcStatus.REM_ACCESS_ERR;
      }
      rx.position(rx.position() + buffered);
      unread -= buffered;
    }
    if (unread == 0) {
      return WcStatus.SUCCESS;
    }
    ByteBuffer view = views.view(viewSlot, mr, offset + buffered, unread);
    long deadline = payloadDeadline();
    while (view.hasRemaining()) {
      int before = view.remaining();
      long n = moveChunk(mw, b, mr, null, view, null);
      if (n == REVOKED) {
        return WcStatus.REM_ACCESS_ERR;
      }
      unread -= before - view.remaining();
      if (n > 0) {
        deadline = payloadDeadline();
      } else if (!await(SelectionKey.OP_READ, deadline)) {
        LOG.debug(
            "QP 0x{}: payload stalled with {} bytes to come",
            Integer.toHexString(qp.qpn()),
            unread);
        return WcStatus.REM_OP_ERR;
      }
    }
    return WcStatus.SUCCESS;
  }

  /**
   * One non-blocking move under the access locks (window's, then region's), after re-checking that
   * the access resolved at the header is still valid: from {@code staged} (or the connection, when
   * null) into {@code dst}; or, for READ data, {@code gather} (header, data view) to the
   * connection.
   *
   * @return bytes moved (0 when the socket was not ready), or {@link #REVOKED}
   */
  private long moveChunk(
      SoftMemoryWindow mw,
      SoftMemoryWindow.Binding b,
      SoftMemoryRegion mr,
      ByteBuffer staged,
      ByteBuffer dst,
      ByteBuffer[] gather)
      throws IOException {
    if (mw == null) {
      return moveLocked(null, null, mr, staged, dst, gather);
    }
    synchronized (mw.accessLock()) {
      return moveLocked(mw, b, mr, staged, dst, gather);
    }
  }

  private long moveLocked(
      SoftMemoryWindow mw,
      SoftMemoryWindow.Binding b,
      SoftMemoryRegion mr,
      ByteBuffer staged,
      ByteBuffer dst,
      ByteBuffer[] gather)
      throws IOException {
    synchronized (mr.accessLock()) {
      if (!stillValid(mw, b, mr)) {
        return REVOKED;
      }
      if (gather != null) {
        return channel.write(gather);
      }
      if (staged != null) {
        int n = staged.remaining();
        dst.put(staged);
        return n;
      }
      int n = channel.read(dst);
      if (n < 0) {
        throw new EOFException("peer closed mid-payload");
      }
      return n;
    }
  }

  /** Under the access locks: the access resolved at the header may still move bytes. */
  private boolean stillValid(SoftMemoryWindow mw, SoftMemoryWindow.Binding b, SoftMemoryRegion mr) {
    if (closed || mr.isClosed()) {
      return false;
    }
    return mw == null || mw.binding() == b;
  }

  /** Discards {@code length} payload bytes of a refused request. */
  private void skip(int length) throws IOException {
    int left = length;
    long deadline = payloadDeadline();
    while (left > 0) {
      if (!rx.hasRemaining()) {
        rx.clear().limit(0);
        if (!fill(1, deadline)) {
          LOG.debug("QP 0x{}: refused payload stalled", Integer.toHexString(qp.qpn()));
          return;
        }
        deadline = payloadDeadline();
      }
      int n = Math.min(left, rx.remaining());
      rx.position(rx.position() + n);
      left -= n;
    }
  }

  private void flushAck() throws IOException {
    if (pendingAckPsn >= 0) {
      int psn = pendingAckPsn;
      pendingAckPsn = -1;
      sendResponse(ResponseFlyweight.TYPE_ACK, (byte) 0, psn, 0);
    }
  }

  private void sendResponse(byte type, byte syndrome, int psn, int length) throws IOException {
    response.wrap(tx, 0).encode(type, syndrome, psn, length);
    tx.clear();
    writeFully(tx);
  }

  private void writeFully(ByteBuffer src) throws IOException {
    long deadline = writeDeadline();
    while (src.hasRemaining()) {
      if (channel.write(src) > 0) {
        deadline = writeDeadline();
      } else if (!await(SelectionKey.OP_WRITE, deadline)) {
        throw new IOException("peer did not read its responses in time");
      }
    }
  }

  /**
   * Makes at least {@code needed} bytes readable in {@link #rx}.
   *
   * @return false when no byte came before {@code deadline} ({@link #NO_DEADLINE}: wait until the
   *     connection closes)
   */
  private boolean fill(int needed, long deadline) throws IOException {
    if (rx.remaining() >= needed) {
      return true;
    }
    rx.compact();
    try {
      while (rx.position() < needed) {
        int n = channel.read(rx);
        if (n < 0) {
          throw new EOFException("peer closed the connection");
        }
        if (n == 0 && !await(SelectionKey.OP_READ, deadline)) {
          return false;
        }
      }
      return true;
    } finally {
      rx.flip();
    }
  }

  /**
   * Waits until the connection is ready for {@code op} or {@code deadline} passes.
   *
   * @return false on the deadline
   * @throws EOFException when the responder was closed meanwhile
   */
  private boolean await(int op, long deadline) throws IOException {
    key.interestOps(op);
    while (!closed) {
      long waitMs = IDLE_WAKE_MS;
      if (deadline != NO_DEADLINE) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        waitMs = Math.max(1, Math.min(waitMs, TimeUnit.NANOSECONDS.toMillis(left)));
      }
      int ready = selector.select(waitMs);
      selector.selectedKeys().clear();
      if (ready > 0) {
        return true;
      }
    }
    throw new EOFException("responder closed");
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

  void close() {
    closed = true;
    Requester.closeQuietly(channel);
    Selector sel = selector;
    if (sel != null) {
      sel.wakeup();
    }
  }

  void join() {
    if (Thread.currentThread() == thread) {
      return;
    }
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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
