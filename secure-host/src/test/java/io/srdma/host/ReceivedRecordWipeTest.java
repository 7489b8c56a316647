package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The opener thread's plaintext buffer serves many sessions and tenants: a listener that clears its
 * read-only view of a short record must find zeros past it, never a longer earlier record's bytes.
 */
class ReceivedRecordWipeTest {
  @Test
  void shouldShowNoEarlierRecordPastTheCurrentOne() {
    assertNoEarlierRecordPastTheCurrentOne(ByteBuffer.allocate(64));
  }

  @Test
  void shouldShowNoEarlierRecordPastTheCurrentOneInADirectBuffer() {
    // a native AES-GCM (openssl, gcrypt) opens into a direct buffer; one larger than the wiper's
    // block of zeros shows the wipe covers every block
    ByteBuffer plain = ByteBuffer.allocateDirect(10_000);
    ReceivedRecord r = new ReceivedRecord();
    open(plain, r, 9_999, (byte) 0x5a);
    open(plain, r, 3, (byte) 0x11);
    ByteBuffer view = r.set("srdma://b/p", "b", "kv", 2, 0, plain).payload();
    view.clear();
    for (int i = 0; i < 10_000; i++) {
      assertEquals(i < 3 ? 0x11 : 0, view.get(i), "byte " + i);
    }
  }

  private static void assertNoEarlierRecordPastTheCurrentOne(ByteBuffer plain) {
    ReceivedRecord r = new ReceivedRecord();
    open(plain, r, 48, (byte) 0x5a); // tenant A's long record
    r.set("srdma://a/p", "a", "kv", 1, 0, plain);
    open(plain, r, 8, (byte) 0x11); // then tenant B's short one
    ByteBuffer view = r.set("srdma://b/p", "b", "kv", 2, 0, plain).payload();
    assertEquals(8, view.remaining());
    view.clear(); // widened to the whole buffer
    byte[] all = new byte[view.remaining()];
    view.get(all);
    byte[] expected = new byte[64];
    Arrays.fill(expected, 0, 8, (byte) 0x11);
    assertEquals(Arrays.toString(expected), Arrays.toString(all));
  }

  @Test
  void shouldWipeRecordsOpenedWithoutAListenerToo() {
    ByteBuffer plain = ByteBuffer.allocate(32);
    ReceivedRecord r = new ReceivedRecord();
    open(plain, r, 32, (byte) 0x7f); // not delivered: no listener on its region
    open(plain, r, 4, (byte) 0x01);
    for (int i = 4; i < 32; i++) {
      assertEquals(0, plain.array()[i], "byte " + i);
    }
  }

  /** What RecordReceiver does: the opener writes {@code length} bytes from 0, flip, opened. */
  private static void open(ByteBuffer plain, ReceivedRecord r, int length, byte value) {
    plain.clear();
    for (int i = 0; i < length; i++) {
      plain.put(value);
    }
    plain.flip();
    r.opened(plain);
  }
}
