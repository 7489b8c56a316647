package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RecordSealer#seal(ByteBuffer, int, int, RecordBinding, long, ByteBuffer, int)}: the range
 * seal the writer seals a caller's buffer with (no view, no scratch copy). Its records are the
 * records of the position/limit seal, byte for byte, and open, or fail to, exactly like them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecordSealerRangeTest {
  private static final int MAX = 4096;
  private static final RecordBinding KV = RecordBinding.of(7, "acme", "kvcache");
  private static final int SLOT = 3 * (MAX + RecordSealer.OVERHEAD); // a slot's offset, not 0

  private SessionPair session;
  private DirectionKeys keys;
  private RecordSealer sealer;
  private final ByteBuffer staging = ByteBuffer.allocateDirect(4 * (MAX + RecordSealer.OVERHEAD));

  @BeforeEach
  void setUp() throws Exception {
    session = new SessionPair();
    keys = session.initiator.sendKeys();
    sealer = new RecordSealer(new SealingKeys(keys), MAX);
  }

  @AfterEach
  void tearDown() {
    session.close();
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i * 31 + 7);
    }
    return b;
  }

  /** The plaintext's bytes 10..10+n in a buffer of each kind, position and limit elsewhere. */
  private static ByteBuffer[] kinds(byte[] text) {
    int n = text.length;
    ByteBuffer heap = ByteBuffer.allocate(n + 20).put(10, text).position(2).limit(n + 15);
    ByteBuffer slice = ByteBuffer.allocate(n + 40).position(7).slice().put(10, text).limit(n + 12);
    ByteBuffer readOnly =
        ByteBuffer.allocate(n + 20).put(10, text).asReadOnlyBuffer().limit(n + 10);
    ByteBuffer direct = ByteBuffer.allocateDirect(n + 20).put(10, text).position(n + 11);
    return new ByteBuffer[] {heap, slice, readOnly, direct};
  }

  private byte[] record(int at, int length) {
    byte[] r = new byte[length];
    staging.get(at, r);
    return r;
  }

  private OpenResult open(int at, int length, ByteBuffer into) {
    return RecordOpener.forSchedule(session.responder, MAX).open(staging, at, length, KV, 99, into);
  }

  @Test
  void shouldLeaveNoPlaintextInTheJceSealersArray() {
    RecordSealer jce = new RecordSealer(new SealingKeys(keys), MAX, AeadProvider.jdk());
    byte[] text = bytes(1000);
    for (ByteBuffer src : kinds(text)) {
      int n = jce.seal(src, 10, text.length, KV, 99, staging, SLOT);
      assertEquals(text.length + RecordSealer.OVERHEAD, n, src.toString());
      assertArrayEquals(
          new byte[jce.inputForTest().length],
          jce.inputForTest(),
          "plaintext left in the sealer's array after sealing " + src);
      ByteBuffer back = ByteBuffer.allocate(text.length);
      assertEquals(OpenResult.OK, open(SLOT, n, back), src.toString());
      assertArrayEquals(text, back.array(), src.toString());
    }
  }

  @Test
  void shouldSealARangeOfEveryKindOfBufferWithoutMovingIt() {
    byte[] text = bytes(1000);
    for (ByteBuffer src : kinds(text)) {
      int position = src.position();
      int limit = src.limit();
      int n = sealer.seal(src, 10, text.length, KV, 99, staging, SLOT);
      assertEquals(text.length + RecordSealer.OVERHEAD, n, src.toString());
      assertEquals(position, src.position(), "position not moved: " + src);
      assertEquals(limit, src.limit(), "limit not moved: " + src);
      for (ByteBuffer into :
          new ByteBuffer[] {ByteBuffer.allocate(MAX), ByteBuffer.allocateDirect(MAX)}) {
        assertEquals(OpenResult.OK, open(SLOT, n, into), src.toString());
        byte[] got = new byte[text.length];
        into.flip().get(got);
        assertArrayEquals(text, got, src.toString());
      }
    }
    assertEquals(4, sealer.nextSequence());
  }

  @Test
  void shouldSealTheSameRecordAsThePositionLimitSeal() {
    byte[] text = bytes(777);
    for (ByteBuffer src : kinds(text)) {
      // Two sealers with their own counters under one key: the same nonce twice, for this test
      // only, so the two paths must give the same bytes.
      RecordSealer byPosition = new RecordSealer(new SealingKeys(keys), MAX);
      RecordSealer byRange = new RecordSealer(new SealingKeys(keys), MAX);
      ByteBuffer view = src.duplicate().limit(10 + text.length).position(10);
      int a = byPosition.seal(view, KV, 99, staging, 0);
      int b = byRange.seal(src, 10, text.length, KV, 99, staging, SLOT);
      assertEquals(a, b);
      assertArrayEquals(record(0, a), record(SLOT, b), src.toString());
    }
  }

  /**
   * A heap destination (loopback's staging) takes the record straight into its array: the same
   * bytes as through the sealer's array into direct memory, at the slice's offset, nothing around
   * it touched — also when the plaintext lies in the same array (then it goes the copying way).
   */
  @Test
  void shouldSealStraightIntoAHeapDestinationTheSameRecord() {
    byte[] text = bytes(1500);
    int room = text.length + RecordSealer.OVERHEAD;
    for (ByteBuffer src : kinds(text)) {
      RecordSealer intoDirect = new RecordSealer(new SealingKeys(keys), MAX);
      RecordSealer intoHeap = new RecordSealer(new SealingKeys(keys), MAX);
      byte[] array = new byte[13 + 2 * room + 9];
      java.util.Arrays.fill(array, (byte) 0x5A);
      ByteBuffer heap = ByteBuffer.wrap(array, 13, 2 * room).slice(); // arrayOffset 13
      int a = intoDirect.seal(src, 10, text.length, KV, 99, staging, SLOT);
      int b = intoHeap.seal(src, 10, text.length, KV, 99, heap, room);
      assertEquals(a, b);
      byte[] got = new byte[b];
      System.arraycopy(array, 13 + room, got, 0, b);
      assertArrayEquals(record(SLOT, a), got, src.toString());
      for (int i = 0; i < array.length; i++) {
        if (i < 13 + room || i >= 13 + room + b) {
          assertEquals((byte) 0x5A, array[i], "byte " + i + " outside the record: " + src);
        }
      }
      staging.put(0, got);
      ByteBuffer into = ByteBuffer.allocate(MAX);
      assertEquals(OpenResult.OK, open(0, b, into));
      assertEquals(text.length, into.position());
    }

    // the plaintext in the destination's own array, overlapping where the record goes
    byte[] shared = new byte[3 * room];
    System.arraycopy(text, 0, shared, 0, text.length);
    ByteBuffer both = ByteBuffer.wrap(shared);
    RecordSealer intoDirect = new RecordSealer(new SealingKeys(keys), MAX);
    RecordSealer intoShared = new RecordSealer(new SealingKeys(keys), MAX);
    int a = intoDirect.seal(ByteBuffer.wrap(text), 0, text.length, KV, 99, staging, SLOT);
    int b = intoShared.seal(both, 0, text.length, KV, 99, both, 8);
    assertEquals(a, b);
    byte[] got = new byte[b];
    System.arraycopy(shared, 8, got, 0, b);
    assertArrayEquals(record(SLOT, a), got);
  }

  @Test
  void shouldRefuseAHeapDestinationWithoutRoomBeforeItsLimit() {
    byte[] array = new byte[2 * MAX];
    ByteBuffer heap = ByteBuffer.wrap(array).limit(100 + RecordSealer.OVERHEAD - 1);
    assertEquals(
        RecordSealer.NO_ROOM, sealer.seal(ByteBuffer.allocate(100), 0, 100, KV, 0, heap, 0));
    assertEquals(0, sealer.nextSequence());
    for (byte x : array) {
      assertEquals(0, x);
    }
  }

  @Test
  void shouldFailToOpenARangeSealedRecordWithAnyByteChanged() {
    byte[] text = bytes(48);
    ByteBuffer src = ByteBuffer.allocateDirect(64).put(10, text);
    int n = sealer.seal(src, 10, text.length, KV, 99, staging, SLOT);
    byte[] genuine = record(SLOT, n);
    for (int i = 0; i < n; i++) {
      staging.put(SLOT, genuine);
      staging.put(SLOT + i, (byte) (genuine[i] ^ 0x40));
      ByteBuffer into = ByteBuffer.allocate(MAX);
      OpenResult r = open(SLOT, n, into);
      assertNotEquals(OpenResult.OK, r, "byte " + i + " changed and the record opened");
      if (r == OpenResult.AUTH_FAILED) {
        assertEquals(0, into.position(), "no plaintext of a forged record");
      }
    }
    staging.put(SLOT, genuine);
    assertEquals(OpenResult.OK, open(SLOT, n, ByteBuffer.allocate(MAX)));
  }

  @Test
  void shouldRefuseWithoutUsingASequence() {
    ByteBuffer src = ByteBuffer.allocate(MAX + 10);
    assertEquals(
        RecordSealer.NO_ROOM,
        sealer.seal(
            src, 0, 100, KV, 0, staging, staging.capacity() - 100 - RecordSealer.OVERHEAD + 1));
    assertEquals(RecordSealer.NO_ROOM, sealer.seal(src, 0, 100, KV, 0, staging, -1));
    assertEquals(
        RecordSealer.NO_ROOM,
        sealer.seal(src, 0, 100, KV, 0, staging.duplicate().limit(SLOT + 50), SLOT));
    assertEquals(RecordSealer.TOO_LARGE, sealer.seal(src, 0, MAX + 1, KV, 0, staging, 0));
    ByteBuffer limited = ByteBuffer.allocate(100).limit(50);
    assertThrows(
        IndexOutOfBoundsException.class, () -> sealer.seal(limited, 40, 11, KV, 0, staging, 0));
    assertThrows(
        IndexOutOfBoundsException.class, () -> sealer.seal(limited, -1, 10, KV, 0, staging, 0));
    assertThrows(
        IndexOutOfBoundsException.class, () -> sealer.seal(limited, 0, -1, KV, 0, staging, 0));
    assertEquals(0, sealer.nextSequence(), "refused seals use no sequence");
    int n =
        sealer.seal(src, 0, 100, KV, 0, staging, staging.capacity() - 100 - RecordSealer.OVERHEAD);
    assertEquals(100 + RecordSealer.OVERHEAD, n, "a record that ends at the limit fits");
    assertEquals(1, sealer.nextSequence());
  }
}
