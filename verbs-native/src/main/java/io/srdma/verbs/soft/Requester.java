package io.srdma.verbs.soft;

import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requester side of one QP: the TCP connection to the peer's responder, non-blocking after the
 * HELLO. Posting threads encode request headers and gather payload views, then write them in one
 * call ({@link #flush()}, under the QP's send lock). Responses are read by whoever drives {@link
 * #progress()}: the thread polling or waiting on the send CQ (so a completion needs no extra thread
 * hop, as a NIC's completion is seen by the poller), a posting thread whose write is blocked, or
 * the device's timer for QPs nobody polls.
 */
final class Requester {
  private static final Logger LOG = LoggerFactory.getLogger(Requester.class);
  private static final int MAX_BATCH = 64;
  // Responses are 16 bytes and READ data that is not buffered already is read straight into its
  // region, so a few KiB of read-ahead serve any traffic.
  private static final int RX_SIZE = 4 * 1024;
  static final int IDLE_RX_SIZE = 256;
  private static final long WRITE_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** Payloads up to this size are copied behind their header: one buffer per request. */
  static final int INLINE_MAX = 224;

  private static final int SLOT = RequestFlyweight.LENGTH + INLINE_MAX;

  private final SoftQueuePair qp;
  private final SocketChannel channel;
  // How a posting thread waits while the socket is full: through the device context's shared
  // WriteWaiter (no descriptor of this QP's own; see WriteWaiter for why not a retry loop).
  private final WriteWaiter.Waiter writeWait = new WriteWaiter.Waiter();
  private volatile WriteWaiter writeWaiter; // the context's, taken on the first full socket
  private final int maxSge;
  // Allocated at the first post (a QP that never sends keeps none); guarded by the send lock.
  private ByteBuffer headerBlock;
  // One slot per request of a batch; a batch never holds more than the send queue does.
  private final ByteBuffer[] headers;
  private int slots; // of headers, backed by headerBlock
  private final ByteBuffer[] gather;
  private final ViewCache gatherViews;
  private final RequestFlyweight request = new RequestFlyweight();
  private final ResponseFlyweight response = new ResponseFlyweight();
  // Small until the first post: a QP that never sends gets no responses, only (at most) its
  // peer's close, so a host's queue pair, which only answers, keeps 256 B instead of 4 KiB.
  // Replaced by a RX_SIZE buffer under progressLock once grow is set; read only under it.
  private ByteBuffer rx = ByteBuffer.allocateDirect(IDLE_RX_SIZE);
  private volatile boolean grow;
  private final ReentrantLock progressLock = new ReentrantLock();
  private final ViewCache readViews = new ViewCache(1); // under progressLock
  private int batchHeaders;
  private int gatherCount;
  private volatile boolean closed;

  // A READ response being scattered, across calls of progress().
  private int readSlot = -1;
  private int readPsn;
  private int readSge;
  private int readSgeDone;

  private Requester(SoftQueuePair qp, SocketChannel channel) throws IOException {
    this.qp = qp;
    this.channel = channel;
    this.maxSge = qp.attributes().maxSendSge();
    headers = new ByteBuffer[Math.min(MAX_BATCH, qp.attributes().maxSendWr())];
    gather = new ByteBuffer[headers.length * (1 + maxSge)];
    gatherViews = new ViewCache(gather.length);
    rx.limit(0);
    channel.configureBlocking(false);
  }

  /**
   * (Re)allocates the header block with {@code n} slots; the batch is empty. Starts at one slot and
   * doubles when a batch fills it, up to a batch's bound: a QP that posts one request at a time
   * keeps 256 B, one that posts arrays of 64 reaches 16 KiB after six doublings and stays there.
   */
  private void allocateHeaders(int n) {
    grow = true; // the responses' buffer grows at the next progress()
    headerBlock = ByteBuffer.allocateDirect(n * SLOT);
    slots = n;
    for (int i = 0; i < n; i++) {
      headers[i] = headerBlock.duplicate().position(i * SLOT).limit((i + 1) * SLOT).slice();
    }
  }

  /** Connects to the responder named in {@code remote} and introduces this QP (bounded). */
  static Requester connect(SoftQueuePair qp, ConnectionInfo remote, Duration timeout) {
    InetSocketAddress address = SoftDeviceContext.decodeAddress(remote.address(), "modify_qp(RTS)");
    SocketChannel ch = null;
    ScheduledFuture<?> guard = null;
    try {
      ch = SocketChannel.open();
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.socket().connect(address, (int) Math.max(1, timeout.toMillis()));
      SocketChannel toClose = ch;
      guard = qp.softContext().schedule(() -> closeQuietly(toClose), timeout);
      ByteBuffer hello = ByteBuffer.allocate(RequestFlyweight.LENGTH);
      new RequestFlyweight()
          .wrap(hello, 0)
          .encode(
              RequestFlyweight.OP_HELLO,
              (byte) 0,
              qp.localInfo().psn(),
              0,
              qp.qpn(),
              RequestFlyweight.HELLO_MAGIC,
              remote.qpn());
      while (hello.hasRemaining()) {
        ch.write(hello);
      }
      ByteBuffer answer = ByteBuffer.allocate(ResponseFlyweight.LENGTH);
      while (answer.hasRemaining()) {
        if (ch.read(answer) < 0) {
          throw new EOFException("responder closed the connection");
        }
      }
      ResponseFlyweight r = new ResponseFlyweight().wrap(answer, 0);
      if (r.type() != ResponseFlyweight.TYPE_HELLO_ACK) {
        String why =
            r.syndrome() == ResponseFlyweight.HELLO_NAK_NO_QP
                ? "no such queue pair"
                : "queue pair already connected";
        throw new VerbsException(
            VerbsException.Reason.IO,
            "modify_qp(RTS)",
            "peer " + address + " refused QP 0x" + Integer.toHexString(remote.qpn()) + ": " + why);
      }
      guard.cancel(false);
      return new Requester(qp, ch);
    } catch (IOException e) {
      closeQuietly(ch);
      throw new VerbsException(
          VerbsException.Reason.IO,
          "modify_qp(RTS)",
          "cannot reach the peer's responder at " + address + ": " + e,
          e);
    } catch (RuntimeException e) {
      closeQuietly(ch);
      throw e;
    } finally {
      if (guard != null) {
        guard.cancel(false);
      }
    }
  }

  SocketChannel channel() {
    return channel;
  }

  /**
   * Adds a request header to the batch being built. Caller holds the QP's send lock. A payload of
   * up to {@link #INLINE_MAX} bytes is then added with {@link #addInline}, a longer one with {@link
   * #addPayload}.
   */
  void addHeader(byte opcode, byte flags, int psn, int length, int imm, long address, int rkey) {
    boolean slotsFull = batchHeaders == slots && headerBlock != null;
    if (slotsFull || gatherCount + 1 + maxSge > gather.length) {
      try {
        flush();
      } catch (IOException e) {
        qp.fail(WcStatus.RETRY_EXC_ERR);
      }
    }
    if (headerBlock == null) {
      allocateHeaders(1);
    } else if (slotsFull && slots < headers.length) {
      allocateHeaders(Math.min(2 * slots, headers.length)); // batches this large happen
    }
    ByteBuffer h = headers[batchHeaders++];
    request.wrap(h, 0).encode(opcode, flags, psn, length, imm, address, rkey);
    h.clear().limit(RequestFlyweight.LENGTH);
    gather[gatherCount++] = h;
  }

  /**
   * Copies payload bytes of the request whose header was added last behind that header (at most
   * {@link #INLINE_MAX} in all); the bytes are taken now, as the flush follows in the same post.
   */
  void addInline(SoftMemoryRegion mr, long offset, int length) {
    ByteBuffer h = gather[gatherCount - 1];
    int at = h.limit();
    h.limit(at + length);
    h.put(at, mr.memory(), (int) offset, length);
  }

  /** Adds payload bytes of the request whose header was added last. */
  void addPayload(SoftMemoryRegion mr, long offset, int length) {
    gather[gatherCount] = gatherViews.view(gatherCount, mr, offset, length);
    gatherCount++;
  }

  /**
   * Writes the batch. Caller holds the QP's send lock. While the socket is full it reads responses
   * (so the peer, blocked on sending them, can drain our requests) and waits; a QP that failed
   * meanwhile closes the channel, which ends the wait.
   */
  void flush() throws IOException {
    try {
      int start = 0;
      while (start < gatherCount) {
        long n = channel.write(gather, start, gatherCount - start);
        while (start < gatherCount && !gather[start].hasRemaining()) {
          start++;
        }
        if (n == 0 && start < gatherCount) {
          progress();
          if (closed) {
            throw new ClosedChannelException();
          }
          WriteWaiter w = writeWaiter;
          if (w == null) {
            w = qp.softContext().writeWaiter();
            writeWaiter = w;
          }
          // A slice at a time: responses are read again between slices (see above).
          w.await(channel, writeWait, WRITE_WAIT_NANOS);
        }
      }
    } finally {
      for (int i = 0; i < gatherCount; i++) {
        gather[i] = null;
      }
      gatherCount = 0;
      batchHeaders = 0;
    }
  }

  /**
   * Reads and handles every response available now, without blocking. Only one thread at a time
   * does this; others return at once.
   *
   * @return the number of responses handled
   */
  int progress() {
    if (closed || !progressLock.tryLock()) {
      return 0;
    }
    int handled = 0;
    try {
      if (grow && rx.capacity() < RX_SIZE) {
        ByteBuffer larger = ByteBuffer.allocateDirect(RX_SIZE);
        larger.put(rx).flip(); // what was read and not yet handled moves along
        rx = larger;
      }
      boolean readAll = false;
      while (!closed) {
        int step = handleBuffered();
        if (step > 0) {
          handled += step;
          continue;
        }
        if (step < 0 || readAll) {
          // readAll: the last read took all the socket had; the selector reports what comes next,
          // so another read now would mostly find nothing (one system call less per call).
          break;
        }
        rx.compact();
        int room = rx.remaining();
        int n;
        try {
          n = channel.read(rx);
        } finally {
          rx.flip();
        }
        if (n < 0) {
          throw new EOFException("peer closed the connection");
        }
        if (n == 0) {
          break;
        }
        readAll = n < room;
      }
    } catch (ProtocolException e) {
      LOG.warn(
          "QP 0x{}: bad response from peer, failing the QP: {}",
          Integer.toHexString(qp.qpn()),
          e.getMessage());
      qp.fail(WcStatus.BAD_RESP_ERR);
    } catch (IOException e) {
      if (!closed) {
        LOG.debug(
            "QP 0x{}: connection to peer lost: {}", Integer.toHexString(qp.qpn()), e.toString());
        qp.fail(WcStatus.RETRY_EXC_ERR);
      }
    } finally {
      progressLock.unlock();
    }
    return handled;
  }

  /**
   * Handles what {@link #rx} holds.
   *
   * @return 1 if something was handled, 0 if more bytes are needed, -1 to stop (QP failed)
   */
  private int handleBuffered() throws IOException {
    if (readSlot >= 0) {
      return scatterReadPayload();
    }
    if (rx.remaining() < ResponseFlyweight.LENGTH) {
      return 0;
    }
    response.wrap(rx, rx.position());
    byte type = response.type();
    int psn = response.psn();
    int length = response.length();
    if (response.version() != RequestFlyweight.VERSION) {
      throw new ProtocolException("response version " + response.version());
    }
    if (!response.reservedZero()
        || (type != ResponseFlyweight.TYPE_NAK && response.syndrome() != 0)) {
      throw new ProtocolException(
          "response header with reserved bits set, or a syndrome on a type " + type + " response");
    }
    rx.position(rx.position() + ResponseFlyweight.LENGTH);
    qp.progressed();
    SendQueue sq = qp.sendQueue();
    // Only its READ RESPONSE completes an RDMA READ: an ACK or NAK naming or passing a READ still
    // waiting for its data, or data for any other request, would complete a READ whose buffer
    // holds no response; that is a protocol error (BAD_RESP_ERR, the QP fails).
    int slot = sq.answerableSlot(psn);
    if (type == ResponseFlyweight.TYPE_ACK) {
      if (slot < 0 || sq.isRead(slot)) {
        throw new ProtocolException("ACK for PSN " + psn + " answers no request, or a READ");
      }
      sq.ackThrough(psn);
      return 1;
    }
    if (type == ResponseFlyweight.TYPE_NAK) {
      WcStatus status = WcStatus.fromCode(response.syndrome());
      if (slot < 0 || !isNakStatus(status)) {
        throw new ProtocolException("NAK " + status + " for PSN " + psn + " answers no request");
      }
      qp.failAt(psn, status);
      return -1;
    }
    if (type == ResponseFlyweight.TYPE_READ_RESP) {
      if (slot < 0 || !sq.isRead(slot) || length != sq.byteLength(slot)) {
        throw new ProtocolException(
            "READ response for PSN " + psn + " of " + length + " bytes matches no request");
      }
      readSlot = slot;
      readPsn = psn;
      readSge = 0;
      readSgeDone = 0;
      return 1;
    }
    throw new ProtocolException("unknown response type " + type);
  }

  /** The statuses a responder NAKs with: the remote errors of a request it refused. */
  private static boolean isNakStatus(WcStatus s) {
    return s == WcStatus.REM_ACCESS_ERR
        || s == WcStatus.REM_INV_REQ_ERR
        || s == WcStatus.REM_OP_ERR
        || s == WcStatus.RNR_RETRY_EXC_ERR;
  }

  /** Places READ response bytes into the request's local SGEs. */
  private int scatterReadPayload() throws IOException {
    SendQueue sq = qp.sendQueue();
    while (readSge < sq.readSges(readSlot) && sq.readLength(readSlot, readSge) == readSgeDone) {
      readSge++;
      readSgeDone = 0;
    }
    if (readSge == sq.readSges(readSlot)) {
      readSlot = -1;
      sq.ackThrough(readPsn);
      return 1;
    }
    int want = sq.readLength(readSlot, readSge) - readSgeDone;
    long at = sq.readOffset(readSlot, readSge) + readSgeDone;
    SoftMemoryRegion mr = sq.readRegion(readSlot, readSge);
    int n;
    // Under the region's lock, which its close() takes: once the region is deregistered no byte
    // lands in it (its memory is the application's again). A NIC resolves the lkey when the data
    // arrives; rxe fails the READ with LOC_PROT_ERR, and so does this.
    synchronized (mr.accessLock()) {
      n = mr.isClosed() ? -1 : place(mr, at, want);
    }
    if (n < 0) {
      readSlot = -1;
      qp.failAt(readPsn, WcStatus.LOC_PROT_ERR);
      return -1;
    }
    readSgeDone += n;
    return n > 0 ? 1 : 0;
  }

  /** Moves up to {@code want} READ bytes into {@code mr} at {@code at}; returns how many. */
  private int place(SoftMemoryRegion mr, long at, int want) throws IOException {
    if (!rx.hasRemaining()) {
      // Nothing buffered: straight from the socket into the region, no copy, no large buffer.
      int n = channel.read(readViews.view(0, mr, at, want));
      if (n < 0) {
        throw new EOFException("peer closed the connection mid-response");
      }
      return n;
    }
    int n = Math.min(rx.remaining(), want);
    mr.memory().put((int) at, rx, rx.position(), n);
    rx.position(rx.position() + n);
    return n;
  }

  /**
   * Stops reading responses (any thread). Returns once a {@link #progress()} under way has stopped
   * (at its next step, as it sees {@code closed}; a step is one non-blocking move): the caller
   * flushes the send queue next, and no READ byte may land after a READ's completion, nor in a slot
   * the flush retired.
   */
  void close() {
    closed = true;
    closeQuietly(channel);
    WriteWaiter w = writeWaiter;
    if (w != null) {
      w.closed(writeWait);
    }
    progressLock.lock();
    progressLock.unlock();
  }

  static void closeQuietly(SocketChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // closing a broken connection: nothing more to do
      }
    }
  }

  /** The peer broke the protocol. */
  static final class ProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    ProtocolException(String message) {
      super(message);
    }
  }
}
