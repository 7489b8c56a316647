package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class StreamReceiverTest {

  @Test
  void shouldReassembleMessagesFromChunksOfAnySize() {
    int size = 100;
    int n = 50;
    ByteBuffer stream = ByteBuffer.allocate((n + 1) * size);
    CRC32C sent = new CRC32C();
    for (int i = 0; i <= n; i++) {
      Payload.fill(stream, i * size, size);
      Payload.stamp(stream, i * size, i == n ? Payload.END : i);
      if (i < n) {
        sent.update(stream.array(), i * size, size);
      }
    }
    SplittableRandom random = new SplittableRandom(7);
    Payload.StreamReceiver r = new Payload.StreamReceiver(size, true);
    int pos = 0;
    int completed = 0;
    while (pos < stream.capacity()) {
      int len = Math.min(stream.capacity() - pos, 1 + random.nextInt(3 * size));
      completed += r.consume(ByteBuffer.wrap(stream.array(), pos, len));
      pos += len;
    }
    assertEquals(n, completed);
    assertEquals(n, r.delivered());
    assertEquals(0, r.sequenceErrors());
    assertEquals(sent.getValue(), r.checksum());
    assertTrue(r.ended());
  }

  @Test
  void shouldCountMessagesOutOfSequence() {
    ByteBuffer two = ByteBuffer.allocate(16);
    Payload.stamp(two, 0, 0);
    Payload.stamp(two, 8, 5);
    Payload.StreamReceiver r = new Payload.StreamReceiver(8, false);
    assertEquals(2, r.consume(two));
    assertEquals(1, r.sequenceErrors());
  }

  @Test
  void shouldRefuseBytesAfterTheEndMessage() {
    ByteBuffer b = ByteBuffer.allocate(16);
    Payload.stamp(b, 0, Payload.END);
    Payload.StreamReceiver r = new Payload.StreamReceiver(8, false);
    assertThrows(IllegalStateException.class, () -> r.consume(b));
  }
}
