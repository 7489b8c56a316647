package io.srdma.channel.protocol;

import static io.srdma.channel.protocol.FrameHeaderFlyweight.HEADER_LENGTH;

import io.srdma.channel.protocol.ProtocolException.Reason;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * Writes control-plane frames to a stream (a TLS socket's output stream): one {@code write} and one
 * {@code flush} per frame, so a frame is never interleaved with another. Thread-safe: the session's
 * request handler and a revocation pushed from another thread may write at once.
 *
 * <p>Every outgoing frame is validated exactly as {@link FrameReader} validates incoming ones, so a
 * bug here shows as a {@link ProtocolException} on this side rather than a session the peer ends.
 * The buffer is wiped after each frame (grants carry key material). After an {@link IOException}
 * part of a frame may be on the wire: close the connection.
 */
public final class FrameWriter {
  private final OutputStream out;
  private final byte[] buffer = new byte[HEADER_LENGTH + MessageType.largestBodyLength()];
  private final FrameHeaderFlyweight header = new FrameHeaderFlyweight().wrap(buffer, 0);
  private final Frame check = new Frame(buffer);
  private long framesWritten;

  /**
   * A writer.
   *
   * @param out the stream, usually a TLS socket's
   */
  public FrameWriter(OutputStream out) {
    this.out = out;
  }

  /**
   * Writes a frame whose body {@code body} encodes.
   *
   * @param type the message type
   * @param requestId the request id: non-zero for requests and their answers, else usually 0
   * @param body encodes the body into this writer's buffer and returns its length
   * @throws ProtocolException when the frame would not be valid; nothing was written
   * @throws IOException the stream failed
   */
  public synchronized void write(MessageType type, int requestId, BodyEncoder body)
      throws IOException {
    try {
      int length = body.encode(buffer, HEADER_LENGTH, type.maxBodyLength());
      if (length < type.minBodyLength() || length > type.maxBodyLength()) {
        throw new ProtocolException(
            Reason.BAD_VALUE,
            type
                + " body of "
                + length
                + " bytes, allowed "
                + type.minBodyLength()
                + ".."
                + type.maxBodyLength());
      }
      if (type.needsRequestId() && requestId == 0) {
        throw new ProtocolException(Reason.BAD_REQUEST_ID, type + " without a request id");
      }
      header.encode(type, requestId, length);
      check.set(type, requestId, length);
      out.write(buffer, 0, HEADER_LENGTH + length);
      out.flush();
      framesWritten++;
    } finally {
      Arrays.fill(buffer, (byte) 0);
    }
  }

  /**
   * Writes a frame with an empty body (CLOSE).
   *
   * @throws ProtocolException when the type needs a body
   * @throws IOException the stream failed
   */
  public void write(MessageType type, int requestId) throws IOException {
    write(type, requestId, (b, o, c) -> 0);
  }

  /** How many frames were written. */
  public synchronized long framesWritten() {
    return framesWritten;
  }
}
