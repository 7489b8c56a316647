package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.QpState;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
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
 */
final class Responder implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Responder.class);
  private static final int RX_SIZE = 64 * 1024;
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

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
      ctx.forget(this);
    }
  }

  /** Reads the HELLO (within the transport timeout) and attaches to the named QP. */
  private boolean hello() throws IOException {
    ScheduledFuture<?> guard = ctx.schedule(this::close, ctx.options().transportTimeout());
    try {
      fill(RequestFlyweight.LENGTH);
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
      fill(RequestFlyweight.LENGTH);
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
      skip(length);
      return WcStatus.REM_ACCESS_ERR;
    }
    int slot = -1;
    if (withImm) {
      slot = qp.receiveQueue().awaitHead(rnrDeadline());
      if (slot < 0) {
        skip(length);
        return WcStatus.RNR_RETRY_EXC_ERR;
      }
    }
    if (length > 0) {
      receiveInto(0, target, targetOffset, length);
    }
    if (withImm) {
      qp.receiveQueue().complete(WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, length, true, imm);
    }
    return WcStatus.SUCCESS;
  }

  private WcStatus send(boolean withImm, int length, int imm)
      throws IOException, InterruptedException {
    ReceiveQueue rq = qp.receiveQueue();
    int slot = rq.awaitHead(rnrDeadline());
    if (slot < 0) {
      skip(length);
      return WcStatus.RNR_RETRY_EXC_ERR;
    }
    long room = 0;
    for (int k = 0; k < rq.sges(slot); k++) {
      room += rq.length(slot, k);
      if (qp.resolveLocal(
              rq.address(slot, k), rq.length(slot, k), rq.lkey(slot, k), AccessFlags.LOCAL_WRITE)
          == null) {
        skip(length);
        rq.complete(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0);
        return WcStatus.REM_OP_ERR;
      }
    }
    if (length > room) {
      skip(length);
      rq.complete(WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0);
      return WcStatus.REM_INV_REQ_ERR;
    }
    int left = length;
    for (int k = 0; k < rq.sges(slot) && left > 0; k++) {
      int n = Math.min(left, rq.length(slot, k));
      SoftMemoryRegion mr =
          qp.resolveLocal(rq.address(slot, k), n, rq.lkey(slot, k), AccessFlags.LOCAL_WRITE);
      receiveInto(1 + k, mr, mr.offsetOf(rq.address(slot, k), n), n);
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
    txGather[0] = tx;
    txGather[1] = length == 0 ? EMPTY : views.view(0, target, targetOffset, length);
    while (txGather[1].hasRemaining() || tx.hasRemaining()) {
      channel.write(txGather);
    }
    txGather[1] = null;
    return WcStatus.SUCCESS;
  }

  /**
   * The RNIC access check. On success {@link #target} and {@link #targetOffset} name the bytes. A
   * zero-length RDMA READ or WRITE touches no memory, so its R_Key and address are not validated
   * (InfiniBand C9-88), as rxe does; a WRITE_WITH_IMM of zero bytes still consumes a receive.
   */
  private boolean resolveRemote(int rkey, long address, int length, int right) {
    if (length == 0) {
      target = null;
      targetOffset = 0;
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
      return resolved(b.region(), b.region().offsetOf(address, length));
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

  /** Moves {@code length} payload bytes from the connection into registered memory. */
  private void receiveInto(int viewSlot, SoftMemoryRegion mr, long offset, int length)
      throws IOException {
    int buffered = Math.min(rx.remaining(), length);
    mr.memory().put((int) offset, rx, rx.position(), buffered);
    rx.position(rx.position() + buffered);
    if (buffered < length) {
      ByteBuffer view = views.view(viewSlot, mr, offset + buffered, length - buffered);
      while (view.hasRemaining()) {
        if (channel.read(view) < 0) {
          throw new EOFException("peer closed mid-payload");
        }
      }
    }
  }

  /** Discards {@code length} payload bytes of a refused request. */
  private void skip(int length) throws IOException {
    int left = length;
    while (left > 0) {
      if (!rx.hasRemaining()) {
        rx.clear().limit(0);
        fill(1);
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
    while (tx.hasRemaining()) {
      channel.write(tx);
    }
  }

  private void fill(int needed) throws IOException {
    if (rx.remaining() >= needed) {
      return;
    }
    rx.compact();
    while (rx.position() < needed) {
      if (channel.read(rx) < 0) {
        throw new EOFException("peer closed the connection");
      }
    }
    rx.flip();
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
