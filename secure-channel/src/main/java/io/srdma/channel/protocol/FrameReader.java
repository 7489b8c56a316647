package io.srdma.channel.protocol;

import static io.srdma.channel.protocol.FrameHeaderFlyweight.HEADER_LENGTH;

import io.srdma.channel.protocol.ProtocolException.Reason;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Reads control-plane frames from a blocking stream (a TLS socket's input stream), one at a time,
 * validating every header field and every body field before handing the frame out.
 *
 * <p>Bounded: the header is read first and its body length checked against this reader's limit and
 * against the type's own maximum before a body byte is read; the body goes into one buffer sized
 * once at construction (at most the header plus the largest body any message can have), so no
 * allocation ever depends on a length the peer chose. Deadlines come from the socket: the caller
 * sets {@code SO_TIMEOUT} and a read that waits longer throws {@link
 * java.net.SocketTimeoutException}.
 *
 * <p>Failure ends the stream: after a {@link ProtocolException}, or an {@link IOException} once a
 * frame's first byte was read, the stream is out of sync and every later {@code read()} throws
 * {@code READER_FAILED}. A timeout before a frame's first byte leaves the reader usable (an idle
 * peer is not a broken one). Not thread-safe: one reader thread per connection.
 */
public final class FrameReader {
  /** System property: the largest body a reader accepts, in bytes. */
  public static final String MAX_BODY_LENGTH_PROP_NAME = "srdma.protocol.max.body.length";

  /** Default of {@link #MAX_BODY_LENGTH_PROP_NAME}: 64 KiB. */
  public static final int MAX_BODY_LENGTH_DEFAULT = 64 * 1024;

  private final InputStream in;
  private final Side peer;
  private final int maxBodyLength;
  private final byte[] buffer;
  private final FrameHeaderFlyweight header = new FrameHeaderFlyweight();
  private final Frame frame;
  private int lastBodyLength;
  private long framesRead;
  private boolean failed;

  /**
   * A reader with the limit from {@link #MAX_BODY_LENGTH_PROP_NAME} (default 64 KiB).
   *
   * @param in the stream, usually a TLS socket's
   * @param peer the side that writes what this reads (a server reads from a {@link Side#CLIENT})
   */
  public FrameReader(InputStream in, Side peer) {
    this(in, peer, maxBodyLengthProperty());
  }

  /**
   * A reader with an explicit limit.
   *
   * @param in the stream, usually a TLS socket's
   * @param peer the side that writes what this reads
   * @param maxBodyLength the largest body accepted, at least {@link
   *     MessageType#largestBodyLength()} so that every valid message fits
   * @throws IllegalArgumentException when the limit is below that
   */
  public FrameReader(InputStream in, Side peer, int maxBodyLength) {
    if (maxBodyLength < MessageType.largestBodyLength()) {
      throw new IllegalArgumentException(
          "max body length "
              + maxBodyLength
              + " is below the largest message, "
              + MessageType.largestBodyLength());
    }
    this.in = in;
    this.peer = peer;
    this.maxBodyLength = maxBodyLength;
    this.buffer = new byte[HEADER_LENGTH + MessageType.largestBodyLength()];
    this.header.wrap(buffer, 0);
    this.frame = new Frame(buffer);
  }

  /** The value of {@link #MAX_BODY_LENGTH_PROP_NAME}, or its default. */
  public static int maxBodyLengthProperty() {
    return Integer.getInteger(MAX_BODY_LENGTH_PROP_NAME, MAX_BODY_LENGTH_DEFAULT);
  }

  /**
   * Reads the next frame, blocking until it is complete or the socket's timeout passes.
   *
   * @return the frame, valid until the next call; {@code null} when the stream ended cleanly
   *     between frames
   * @throws ProtocolException what was wrong with the frame; the session must end
   * @throws IOException the stream failed or timed out
   */
  public Frame read() throws IOException {
    if (failed) {
      throw new ProtocolException(
          Reason.READER_FAILED, "an earlier frame failed; stream out of sync");
    }
    Arrays.fill(buffer, 0, HEADER_LENGTH + lastBodyLength, (byte) 0); // grants carry key material
    lastBodyLength = 0;
    int first = in.read();
    if (first < 0) {
      return null;
    }
    failed = true;
    try {
      buffer[0] = (byte) first;
      readFully(1, HEADER_LENGTH - 1, "header");
      MessageType type = checkHeader();
      int length = header.bodyLength();
      lastBodyLength = length;
      readFully(HEADER_LENGTH, length, type + " body");
      frame.set(type, header.requestId(), length);
      failed = false;
    } finally {
      if (failed) {
        Arrays.fill(buffer, (byte) 0);
      }
    }
    framesRead++;
    return frame;
  }

  private MessageType checkHeader() {
    if (header.magic() != FrameHeaderFlyweight.MAGIC) {
      throw new ProtocolException(
          Reason.BAD_MAGIC, "magic 0x" + Integer.toHexString(header.magic()));
    }
    if (header.version() != FrameHeaderFlyweight.VERSION) {
      throw new ProtocolException(
          Reason.UNSUPPORTED_VERSION,
          "version " + header.version() + ", this build speaks " + FrameHeaderFlyweight.VERSION);
    }
    MessageType type = MessageType.fromCode(header.typeCode());
    if (header.flags() != 0 || header.reserved() != 0) {
      throw new ProtocolException(Reason.RESERVED_NOT_ZERO, type + " header flags or reserved");
    }
    int length = header.bodyLength();
    if (length < 0 || length > maxBodyLength) {
      throw new ProtocolException(
          Reason.FRAME_TOO_LARGE,
          type + " body of " + Integer.toUnsignedString(length) + " bytes, limit " + maxBodyLength);
    }
    if (length > type.maxBodyLength()) {
      throw new ProtocolException(
          Reason.FRAME_TOO_LARGE,
          type
              + " body of "
              + length
              + " bytes, the message holds at most "
              + type.maxBodyLength());
    }
    if (length < type.minBodyLength()) {
      throw new ProtocolException(
          Reason.BODY_TOO_SHORT,
          type + " body of " + length + " bytes, the message needs " + type.minBodyLength());
    }
    if (!type.sentBy(peer)) {
      throw new ProtocolException(Reason.UNEXPECTED_TYPE, type + " is never sent by the " + peer);
    }
    if (type.needsRequestId() && header.requestId() == 0) {
      throw new ProtocolException(Reason.BAD_REQUEST_ID, type + " without a request id");
    }
    return type;
  }

  private void readFully(int at, int n, String what) throws IOException {
    int got = in.readNBytes(buffer, at, n);
    if (got < n) {
      throw new ProtocolException(
          Reason.TRUNCATED, "stream ended " + got + " bytes into a " + n + "-byte " + what);
    }
  }

  /** The largest body this reader accepts. */
  public int maxBodyLength() {
    return maxBodyLength;
  }

  /** How many frames were read. */
  public long framesRead() {
    return framesRead;
  }

  /** The frame buffer itself, for tests of wiping. */
  byte[] buffer() {
    return buffer;
  }

  /** Bytes this reader holds for frames: fixed at construction. */
  int bufferCapacity() {
    return buffer.length;
  }
}
