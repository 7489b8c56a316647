package io.srdma.channel.protocol.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.Frames;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.protocol.Side;
import java.io.IOException;
import java.io.InputStream;

/**
 * Coverage-guided fuzzing of the control-plane frame decoder: arbitrary bytes, delivered in
 * arbitrary chunk sizes, from either side, under any legal body limit. The only outcomes allowed
 * are validated frames (every accessor of the body works, the body is within the reader's limit and
 * the type's bounds, exactly header + body bytes were consumed), a {@link ProtocolException} (after
 * which the reader refuses with READER_FAILED), or a clean end of stream. Anything else — another
 * exception, a loop that makes no progress — is a finding.
 *
 * <p>Regression mode (the normal build) runs the committed seeds in {@code
 * src/test/resources/io/srdma/channel/protocol/fuzz/FrameReaderFuzzTestInputs/readFrames/}; {@code
 * -Pfuzzing} fuzzes (docs/fuzzing.md).
 */
class FrameReaderFuzzTest {
  @FuzzTest(maxDuration = "5m")
  void readFrames(FuzzedDataProvider data) throws IOException {
    Side from = data.consumeBoolean() ? Side.CLIENT : Side.SERVER;
    int limit = MessageType.largestBodyLength() + data.consumeInt(0, 4096);
    int chunk = data.consumeInt(1, 64);
    byte[] bytes = data.consumeRemainingAsBytes();
    ChunkedStream in = new ChunkedStream(bytes, chunk);
    FrameReader reader = new FrameReader(in, from, limit);
    for (int reads = 0; ; reads++) {
      assertTrue(reads <= bytes.length, "more frames than bytes: no progress");
      int before = in.position;
      Frame frame;
      try {
        frame = reader.read();
      } catch (ProtocolException e) {
        assertNotNull(e.reason());
        try {
          reader.read();
        } catch (ProtocolException again) {
          assertEquals(ProtocolException.Reason.READER_FAILED, again.reason());
          return;
        }
        throw new AssertionError("a failed reader read on", e);
      }
      if (frame == null) {
        assertEquals(bytes.length, in.position, "clean end before the stream's end");
        return;
      }
      MessageType type = frame.type();
      int length = frame.bodyLength();
      assertTrue(length >= type.minBodyLength() && length <= type.maxBodyLength(), type::name);
      assertTrue(length <= limit, "body beyond the reader's limit");
      assertTrue(type.sentBy(from), "accepted a type the other side never sends");
      assertEquals(16 + length, in.position - before, "consumed bytes != header + body");
      Frames.touch(frame);
    }
  }

  /** A stream over a byte array that hands out at most {@code chunk} bytes per read. */
  static final class ChunkedStream extends InputStream {
    private final byte[] bytes;
    private final int chunk;
    int position;

    ChunkedStream(byte[] bytes, int chunk) {
      this.bytes = bytes;
      this.chunk = chunk;
    }

    @Override
    public int read() {
      return position < bytes.length ? bytes[position++] & 0xFF : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (len == 0) {
        return 0;
      }
      if (position >= bytes.length) {
        return -1;
      }
      int n = Math.min(Math.min(len, chunk), bytes.length - position);
      System.arraycopy(bytes, position, b, off, n);
      position += n;
      return n;
    }
  }
}
