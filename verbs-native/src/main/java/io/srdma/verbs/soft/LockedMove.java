package io.srdma.verbs.soft;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The soft responder's byte moves between its connection and registered memory: each one
 * non-blocking move under the access locks (the window's, then the region's: the locks {@code
 * LOCAL_INV}, window close and region close take), after re-checking under them that the access
 * resolved at the request's header is still valid and that the responder is not closed. Once a
 * revocation or {@link #close} returns, no further chunk of that key starts. The locks are held for
 * one non-blocking copy only, never while waiting for the peer.
 *
 * <p>{@link #chunk} is confined to the responder's loop thread; {@link #close} and {@link
 * #isClosed} are thread-safe. Allocates nothing.
 */
final class LockedMove {
  /** {@link #chunk} result: the access is no longer valid; nothing was moved. */
  static final long REVOKED = -2;

  private final SocketChannel channel;
  private volatile boolean closed;

  LockedMove(SocketChannel channel) {
    this.channel = channel;
  }

  /** No chunk starts after this (any thread); one under the locks now finishes. */
  void close() {
    closed = true;
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * One move: from {@code from} (or the connection, when null) into {@code dst}; or, for READ data,
   * {@code gather} (header, data view) to the connection.
   *
   * @return bytes moved (0 when the socket was not ready), or {@link #REVOKED}
   * @throws EOFException the peer closed the connection mid-payload
   */
  long chunk(
      SoftMemoryWindow mw,
      SoftMemoryWindow.Binding<SoftMemoryRegion> b,
      SoftMemoryRegion mr,
      ByteBuffer from,
      ByteBuffer dst,
      ByteBuffer[] gather)
      throws IOException {
    if (mw == null) {
      return locked(null, null, mr, from, dst, gather);
    }
    synchronized (mw.accessLock()) {
      return locked(mw, b, mr, from, dst, gather);
    }
  }

  private long locked(
      SoftMemoryWindow mw,
      SoftMemoryWindow.Binding<SoftMemoryRegion> b,
      SoftMemoryRegion mr,
      ByteBuffer from,
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
      if (from != null) {
        int n = from.remaining();
        dst.put(from);
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
  private boolean stillValid(
      SoftMemoryWindow mw, SoftMemoryWindow.Binding<SoftMemoryRegion> b, SoftMemoryRegion mr) {
    if (closed || mr.isClosed()) {
      return false;
    }
    return mw == null || mw.binding() == b;
  }
}
