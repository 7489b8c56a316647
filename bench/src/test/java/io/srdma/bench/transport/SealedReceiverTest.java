package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class SealedReceiverTest {
  private static ByteBuffer messages(int size, long firstSequence, int count) {
    ByteBuffer b = ByteBuffer.allocate(size * count);
    for (int k = 0; k < count; k++) {
      b.putLong(k * size, firstSequence + k);
      b.put(k * size + 8, (byte) (k + 1));
    }
    return b;
  }

  @Test
  void shouldCountOneRecordMessagesAndFlagAWrongSequenceNumber() {
    SealedReceiver r = new SealedReceiver(Duration.ofSeconds(1));
    r.reset(64, false);
    r.onPayload(messages(64, 0, 1));
    r.onPayload(messages(64, 1, 1));
    assertEquals(2, r.delivered());
    assertEquals(0, r.sequenceErrors());
    r.onPayload(messages(64, 7, 1)); // 2 expected
    assertEquals(3, r.delivered());
    assertEquals(1, r.sequenceErrors());
    assertEquals(3, r.recordsOpened());
  }

  @Test
  void shouldCountEachMessageOfACoalescedRecordAndFlagARaggedOne() {
    SealedReceiver r = new SealedReceiver(Duration.ofSeconds(1));
    r.reset(100, false);
    r.onPayload(messages(100, 0, 5));
    assertEquals(5, r.delivered());
    assertEquals(1, r.recordsOpened());
    assertEquals(0, r.sequenceErrors());
    ByteBuffer ragged = ByteBuffer.allocate(250); // two messages and half of one
    ragged.putLong(0, 5).putLong(100, 6);
    r.onPayload(ragged);
    assertEquals(7, r.delivered());
    assertEquals(1, r.sequenceErrors());
  }

  @Test
  void shouldDeliverAMessageOfSeveralRecordsWithItsLastRecord() {
    SealedReceiver r = new SealedReceiver(Duration.ofSeconds(1));
    int size = 100_000;
    r.reset(size, false);
    ByteBuffer first = ByteBuffer.allocate(65_536).putLong(0, 0);
    r.onPayload(first);
    assertEquals(0, r.delivered(), "not before its last byte");
    r.onPayload(ByteBuffer.allocate(size - 65_536));
    assertEquals(1, r.delivered());
    assertEquals(0, r.sequenceErrors());
    r.onPayload(ByteBuffer.allocate(65_536).putLong(0, 9)); // 1 expected
    r.onPayload(ByteBuffer.allocate(size - 65_536));
    assertEquals(2, r.delivered());
    assertEquals(1, r.sequenceErrors());
  }

  @Test
  void shouldChecksumWhatItVerifiesWithoutMovingThePayload() {
    SealedReceiver r = new SealedReceiver(Duration.ofSeconds(1));
    r.reset(64, true);
    ByteBuffer a = messages(64, 0, 1);
    ByteBuffer b = messages(64, 1, 1);
    r.onPayload(a);
    r.onPayload(b);
    assertEquals(0, a.position());
    CRC32C expected = new CRC32C();
    expected.update(a.duplicate());
    expected.update(b.duplicate());
    assertEquals(expected.getValue(), r.crc());
    r.reset(64, false);
    assertEquals(0, r.crc(), "0 unless verifying");
    assertEquals(0, r.recordsOpened(), "reset starts a run");
  }

  @Test
  void shouldWakeTheSenderWhenItsCountIsDeliveredAndGiveUpAfterTheStall() throws Exception {
    SealedReceiver r = new SealedReceiver(Duration.ofMillis(200));
    r.reset(64, false);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread sender =
        new Thread(
            () -> {
              try {
                r.awaitDelivered(3);
              } catch (Throwable t) {
                failed.set(t);
              }
            },
            "test-sender");
    sender.start();
    long giveUp = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (sender.getState() != Thread.State.TIMED_WAITING && sender.isAlive()) {
      assertTrue(System.nanoTime() < giveUp, "the sender never parked: " + sender.getState());
      Thread.onSpinWait(); // its busy time is 200 µs; then it parks
    }
    for (long s = 0; s < 3; s++) {
      r.onPayload(messages(64, s, 1)); // the third wakes the parked sender
    }
    sender.join(5_000);
    assertFalse(sender.isAlive(), "the parked sender was not woken");
    assertNull(failed.get());
    assertEquals(3, r.delivered());
    long t0 = System.nanoTime();
    TimeoutException e = assertThrows(TimeoutException.class, () -> r.awaitDelivered(4));
    assertTrue(System.nanoTime() - t0 >= Duration.ofMillis(200).toNanos(), e.getMessage());
    assertTrue(e.getMessage().contains("delivered nothing"), e.getMessage());
  }
}
