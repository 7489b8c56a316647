package io.srdma.verbs.soft;

import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requester side of one QP: the TCP connection to the peer's responder. Posting threads encode
 * request headers and gather payload views, then write them in one call ({@link #flush()}, under
 * the QP's send lock); this object's thread reads responses and completes send queue slots.
 */
final class Requester implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Requester.class);
  private static final int MAX_BATCH = 64;
  private static final int RX_SIZE = 64 * 1024;

  private final SoftQueuePair qp;
  private final SocketChannel channel;
  private final int maxSge;
  private final ByteBuffer headerBlock;
  private final ByteBuffer[] headers = new ByteBuffer[MAX_BATCH];
  private final ByteBuffer[] gather;
  private final ViewCache gatherViews;
  private final RequestFlyweight request = new RequestFlyweight();
  private final ResponseFlyweight response = new ResponseFlyweight();
  private final ByteBuffer rx = ByteBuffer.allocateDirect(RX_SIZE);
  private final ViewCache scatterViews;
  private final Thread thread;
  private int batchHeaders;
  private int gatherCount;
  private volatile boolean closed;

  private Requester(SoftQueuePair qp, SocketChannel channel) {
    this.qp = qp;
    this.channel = channel;
    this.maxSge = qp.attributes().maxSendSge();
    headerBlock = ByteBuffer.allocateDirect(MAX_BATCH * RequestFlyweight.LENGTH);
    for (int i = 0; i < MAX_BATCH; i++) {
      headers[i] =
          headerBlock
              .duplicate()
              .position(i * RequestFlyweight.LENGTH)
              .limit((i + 1) * RequestFlyweight.LENGTH)
              .slice();
    }
    gather = new ByteBuffer[MAX_BATCH * (1 + maxSge)];
    gatherViews = new ViewCache(gather.length);
    scatterViews = new ViewCache(maxSge);
    rx.limit(0);
    thread = new Thread(this, String.format("srdma-soft-req-qp%06x", qp.qpn()));
    thread.setDaemon(true);
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

  void start() {
    thread.start();
  }

  /** Adds a request header to the batch being built. Caller holds the QP's send lock. */
  void addHeader(byte opcode, byte flags, int psn, int length, int imm, long address, int rkey) {
    if (batchHeaders == MAX_BATCH || gatherCount + 1 + maxSge > gather.length) {
      flushQuietly();
    }
    ByteBuffer h = headers[batchHeaders++];
    request.wrap(h, 0).encode(opcode, flags, psn, length, imm, address, rkey);
    h.clear();
    gather[gatherCount++] = h;
  }

  /** Adds payload bytes of the request whose header was added last. */
  void addPayload(SoftMemoryRegion mr, long offset, int length) {
    gather[gatherCount] = gatherViews.view(gatherCount, mr, offset, length);
    gatherCount++;
  }

  /** Writes the batch. Caller holds the QP's send lock. */
  void flush() throws IOException {
    try {
      int start = 0;
      while (start < gatherCount) {
        channel.write(gather, start, gatherCount - start);
        while (start < gatherCount && !gather[start].hasRemaining()) {
          start++;
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

  private void flushQuietly() {
    try {
      flush();
    } catch (IOException e) {
      qp.fail(WcStatus.RETRY_EXC_ERR);
    }
  }

  @Override
  public void run() {
    try {
      while (!closed) {
        fill(ResponseFlyweight.LENGTH);
        response.wrap(rx, rx.position());
        byte type = response.type();
        int psn = response.psn();
        int length = response.length();
        rx.position(rx.position() + ResponseFlyweight.LENGTH);
        if (response.version() != RequestFlyweight.VERSION) {
          throw new ProtocolException("response version " + response.version());
        }
        qp.progressed();
        if (type == ResponseFlyweight.TYPE_ACK) {
          if (!qp.sendQueue().ackThrough(psn)) {
            throw new ProtocolException("ACK for unknown PSN " + psn);
          }
        } else if (type == ResponseFlyweight.TYPE_NAK) {
          WcStatus status = WcStatus.fromCode(response.syndrome());
          if (qp.sendQueue().pendingSlotFor(psn) < 0) {
            throw new ProtocolException("NAK for unknown PSN " + psn);
          }
          qp.failAt(psn, status);
          return;
        } else if (type == ResponseFlyweight.TYPE_READ_RESP) {
          readResponse(psn, length);
        } else {
          throw new ProtocolException("unknown response type " + type);
        }
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
      closeQuietly(channel);
    }
  }

  private void readResponse(int psn, int length) throws IOException {
    SendQueue sq = qp.sendQueue();
    int slot = sq.pendingSlotFor(psn);
    if (slot < 0 || length != sq.byteLength(slot)) {
      throw new ProtocolException(
          "READ response for PSN " + psn + " of " + length + " bytes does not match a request");
    }
    for (int k = 0; k < sq.readSges(slot); k++) {
      SoftMemoryRegion mr = sq.readRegion(slot, k);
      long offset = sq.readOffset(slot, k);
      int len = sq.readLength(slot, k);
      int buffered = Math.min(rx.remaining(), len);
      mr.memory().put((int) offset, rx, rx.position(), buffered);
      rx.position(rx.position() + buffered);
      if (buffered < len) {
        ByteBuffer view = scatterViews.view(k, mr, offset + buffered, len - buffered);
        while (view.hasRemaining()) {
          if (channel.read(view) < 0) {
            throw new EOFException("peer closed during READ response");
          }
        }
      }
    }
    sq.ackThrough(psn);
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

  void close() {
    closed = true;
    closeQuietly(channel);
  }

  void join() {
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
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
