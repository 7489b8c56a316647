package io.srdma.channel.record.fuzz;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordOpener;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.SessionPair;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing of {@link RecordOpener} with real session keys: arbitrary bytes at
 * arbitrary offsets, lengths and buffer limits, and genuine records with arbitrary mutations.
 * Invariants:
 *
 * <ul>
 *   <li>the outcome is a typed {@link OpenResult}, never an exception;
 *   <li>nothing outside {@code [offset, offset + available)} is read: two openers in the same
 *       state, given the same range surrounded by different bytes, give the same result and
 *       plaintext;
 *   <li>the source is never written;
 *   <li>random bytes never open ({@code OK} would be a forged record);
 *   <li>a genuine record opens iff it is unchanged and opened with its own binding and offset; one
 *       changed bit, another binding or another offset never opens.
 * </ul>
 */
class RecordOpenerFuzzTest {
  private static final int MAX = 512;
  private static final RecordBinding BINDING = RecordBinding.of(7, "acme", "kvcache");
  private static final RecordBinding OTHER = RecordBinding.of(7, "acme", "kvcache2");

  private static SessionPair session;
  private static RecordSealer sealer;
  private static RecordOpener openerA;
  private static RecordOpener openerB;

  private static synchronized void init() throws Exception {
    if (session == null) {
      session = new SessionPair();
      sealer = new RecordSealer(session.initiator.sendKeys(), MAX);
      openerA = RecordOpener.forSchedule(session.responder, MAX);
      openerB = RecordOpener.forSchedule(session.responder, MAX);
    }
  }

  @FuzzTest(maxDuration = "5m")
  void openRecords(FuzzedDataProvider data) throws Exception {
    init();
    boolean genuine = data.consumeBoolean();
    int room = data.consumeInt(0, MAX + 8);
    int capacity = data.consumeInt(0, 2 * MAX + 64);
    int offset = data.consumeInt(-4, capacity + 4);
    int limitCut = data.consumeInt(0, 64);
    byte[] content;
    boolean expectOk = false;
    RecordBinding openWith = BINDING;
    long remoteOffset = data.consumeLong();
    long openAt = remoteOffset;
    byte[] plain = new byte[0];
    if (genuine) {
      plain = data.consumeBytes(data.consumeInt(0, MAX));
      ByteBuffer sealed = ByteBuffer.allocate(plain.length + RecordSealer.OVERHEAD);
      int n = sealer.seal(ByteBuffer.wrap(plain), BINDING, remoteOffset, sealed, 0);
      assertEquals(plain.length + RecordSealer.OVERHEAD, n);
      content = sealed.array().clone();
      for (int k = data.consumeInt(0, 3); k > 0; k--) {
        content[data.consumeInt(0, content.length - 1)] ^= data.consumeByte();
      }
      // two flips of one byte can cancel: compare bytes, not flips
      boolean changed = !Arrays.equals(content, sealed.array());
      if (data.consumeBoolean()) {
        openWith = OTHER;
        changed = true;
      }
      long shift = data.consumeLong();
      openAt = remoteOffset + shift;
      changed |= shift != 0;
      expectOk = !changed;
    } else {
      content = data.consumeRemainingAsBytes();
    }
    int available = genuine ? content.length : data.consumeInt(-4, content.length + 4);
    if (!genuine) {
      available = Math.min(available, content.length);
    }

    ByteBuffer a = source(capacity, offset, content, (byte) 0x00, limitCut);
    ByteBuffer b = source(capacity, offset, content, (byte) 0xA5, limitCut);
    byte[] beforeA = copy(a);
    ByteBuffer outA = ByteBuffer.allocate(room);
    ByteBuffer outB = ByteBuffer.allocate(room);
    OpenResult ra = openerA.open(a, offset, available, openWith, openAt, outA);
    OpenResult rb = openerB.open(b, offset, available, openWith, openAt, outB);
    assertNotNull(ra);
    assertEquals(ra, rb, "the result depends on bytes outside the given range");
    assertArrayEquals(outA.array(), outB.array(), "plaintext depends on bytes outside the range");
    assertEquals(outA.position(), outB.position());
    assertArrayEquals(beforeA, copy(a), "the opener wrote into its source");
    if (!genuine) {
      assertNotEquals(OpenResult.OK, ra, "random bytes opened as a record");
      return;
    }
    boolean fits =
        offset >= 0
            && offset + content.length <= a.limit()
            && available >= content.length
            && room >= plain.length;
    if (expectOk && fits) {
      assertEquals(OpenResult.OK, ra, "a genuine, unchanged record did not open");
      assertArrayEquals(plain, Arrays.copyOf(outA.array(), plain.length));
      assertEquals(plain.length, outA.position());
    } else if (!expectOk) {
      assertNotEquals(OpenResult.OK, ra, "a changed or relocated record opened");
    }
  }

  /** {@code capacity} bytes of {@code fill}, {@code content} at {@code offset} (clipped). */
  private static ByteBuffer source(
      int capacity, int offset, byte[] content, byte fill, int limitCut) {
    ByteBuffer buffer = ByteBuffer.allocateDirect(capacity);
    for (int i = 0; i < capacity; i++) {
      buffer.put(i, fill);
    }
    for (int i = 0; i < content.length; i++) {
      int at = offset + i;
      if (at >= 0 && at < capacity) {
        buffer.put(at, content[i]);
      }
    }
    buffer.limit(Math.max(0, capacity - limitCut));
    return buffer;
  }

  private static byte[] copy(ByteBuffer buffer) {
    ByteBuffer all = buffer.duplicate().clear();
    byte[] out = new byte[all.capacity()];
    all.get(out);
    return out;
  }
}
