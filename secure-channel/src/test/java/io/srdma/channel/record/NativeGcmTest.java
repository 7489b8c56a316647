package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link NativeGcm}, libcrypto's AES-256-GCM on native memory: byte for byte the JDK's GCM in both
 * directions, from and to direct and heap buffers at offsets; a wrong tag leaves nothing behind;
 * every out-of-range, read-only or closed call is refused before the library writes a byte. {@link
 * GcryptGcmTest} runs the same tests on libgcrypt.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NativeGcmTest {
  private static final int MAX = 70_000;
  private static final int[] SIZES = {0, 1, 15, 16, 17, 63, 64, 4096, 65_535, 65_536, MAX};

  private final Random random = new Random(20261204);
  private final SecretKeySpec key = key(1);
  private final byte[] nonce = new byte[12];
  private final byte[] aad = new byte[60];
  private NativeGcm gcm;

  @BeforeEach
  void setUp() {
    try {
      gcm = provider().newNativeGcm(MAX);
    } catch (AeadException e) {
      Assumptions.abort(missing() + " is not loadable here: " + e.getMessage());
    }
    random.nextBytes(nonce);
    random.nextBytes(aad);
  }

  /** The native-memory provider under test. */
  AeadProvider provider() {
    return AeadProvider.openssl();
  }

  /** What {@link #provider()} needs, for the message of a test that cannot run. */
  String missing() {
    return "libcrypto (OpenSSL 3 or 1.1)";
  }

  @AfterEach
  void tearDown() {
    if (gcm != null) {
      gcm.close();
    }
  }

  @Test
  void shouldSealAndOpenExactlyAsTheJdkDoesFromAndToEveryKindOfBuffer() throws Exception {
    for (int size : SIZES) {
      byte[] plain = bytes(size);
      byte[] expected = jdk(Cipher.ENCRYPT_MODE, key, plain);
      for (boolean directIn : new boolean[] {true, false}) {
        for (boolean directOut : new boolean[] {true, false}) {
          ByteBuffer in = buffer(directIn, size + 7).put(7, plain);
          ByteBuffer out = filled(directOut, size + 16 + 9, (byte) 0x33);
          gcm.seal(key, nonce, aad, aad.length, in, 7, size, out, 5);
          assertArrayEquals(expected, range(out, 5, size + 16), size + " B " + directIn);
          assertUntouchedOutside(out, 5, size + 16, (byte) 0x33);
          assertEquals(0, in.position());
          assertEquals(0, out.position());

          ByteBuffer sealed = buffer(directIn, size + 16 + 3).put(3, expected);
          ByteBuffer opened = filled(directOut, size + 4, (byte) 0x44);
          assertTrue(gcm.open(key, nonce, aad, aad.length, sealed, 3, size, opened, 2));
          assertArrayEquals(plain, range(opened, 2, size));
          assertUntouchedOutside(opened, 2, size, (byte) 0x44);
        }
      }
    }
  }

  @Test
  void shouldRefuseEveryFlippedBitClassAndLeaveNoPlaintext() throws Exception {
    // 4 KiB: a heap destination gets the plaintext through the scratch, never before the tag;
    // 32 KiB: libcrypto writes a heap destination's pinned array, which is zeroed on a wrong tag
    for (int size : new int[] {4096, 2 * NativeGcm.PIN_FROM}) {
      byte[] plain = bytes(size);
      byte[] sealed = jdk(Cipher.ENCRYPT_MODE, key, plain);
      for (int at : new int[] {0, 100, size - 1, size, size + 15}) { // ciphertext and tag
        byte[] bad = sealed.clone();
        bad[at] ^= 0x01;
        for (boolean direct : new boolean[] {true, false}) {
          ByteBuffer out = filled(direct, size + 8, (byte) 0x77);
          assertFalse(
              gcm.open(key, nonce, aad, aad.length, ByteBuffer.wrap(bad), 0, size, out, 4),
              "byte " + at);
          byte[] left = range(out, 4, size);
          boolean written = direct || size >= NativeGcm.PIN_FROM;
          for (byte b : left) {
            assertEquals(written ? 0 : 0x77, b, "decrypted bytes left in the destination");
          }
          assertUntouchedOutside(out, 4, size, (byte) 0x77);
        }
      }
    }
    byte[] plain = bytes(4096);
    byte[] sealed = jdk(Cipher.ENCRYPT_MODE, key, plain);
    byte[] otherAad = aad.clone();
    otherAad[59] ^= 0x40;
    assertFalse(
        gcm.open(
            key,
            nonce,
            otherAad,
            otherAad.length,
            ByteBuffer.wrap(sealed),
            0,
            4096,
            ByteBuffer.allocateDirect(4096),
            0));
    assertFalse(
        gcm.open(
            key(2),
            nonce,
            aad,
            aad.length,
            ByteBuffer.wrap(sealed),
            0,
            4096,
            ByteBuffer.allocateDirect(4096),
            0));
  }

  @Test
  void shouldRefuseOutOfRangeCallsBeforeWritingAnything() {
    ByteBuffer in = ByteBuffer.allocateDirect(64);
    ByteBuffer out = filled(true, 80, (byte) 0x55);
    out.limit(79); // a record of 64 + 16 bytes at 0 no longer fits before the limit
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.seal(key, nonce, aad, aad.length, in, 0, 64, out, 0));
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.seal(key, nonce, aad, aad.length, in, 1, 64, out, 0));
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.seal(key, nonce, aad, aad.length, in, -1, 8, out, 0));
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.seal(key, nonce, aad, aad.length, in, 0, 8, out, -1));
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.seal(key, nonce, aad, aad.length + 1, in, 0, 8, out, 0));
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.open(key, nonce, aad, aad.length, in, 0, 49, out, 0)); // 49 + 16 > 64
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.open(key, nonce, aad, aad.length, in, 0, 8, out, 72)); // 72 + 8 > 79
    ByteBuffer big = ByteBuffer.allocateDirect(MAX + 64);
    assertThrows(
        IndexOutOfBoundsException.class,
        () -> gcm.seal(key, nonce, aad, aad.length, big, 0, MAX + 1, big, 0));
    assertThrows(
        ReadOnlyBufferException.class,
        () -> gcm.seal(key, nonce, aad, aad.length, in, 0, 8, out.asReadOnlyBuffer(), 0));
    assertThrows(
        ReadOnlyBufferException.class,
        () -> gcm.open(key, nonce, aad, aad.length, in, 0, 8, out.asReadOnlyBuffer(), 0));
    assertThrows(
        AeadException.class, () -> gcm.seal(key, new byte[8], aad, aad.length, in, 0, 8, out, 0));
    out.limit(80);
    assertUntouchedOutside(out, 0, 0, (byte) 0x55);
  }

  @Test
  void shouldHonourAHeapSlicesArrayOffsetOnEveryPath() throws Exception {
    for (int size : new int[] {100, 2 * NativeGcm.PIN_FROM}) { // through the scratch; pinned
      byte[] plain = bytes(size);
      byte[] expected = jdk(Cipher.ENCRYPT_MODE, key, plain);
      ByteBuffer in = ByteBuffer.allocate(size + 20).position(3).slice(); // arrayOffset 3
      in.put(5, plain);
      ByteBuffer out = ByteBuffer.allocateDirect(size + 16);
      gcm.seal(key, nonce, aad, aad.length, in, 5, size, out, 0);
      assertArrayEquals(expected, range(out, 0, size + 16), size + " B sealed");
      ByteBuffer opened = ByteBuffer.allocate(size + 20).position(9).slice(); // arrayOffset 9
      assertTrue(gcm.open(key, nonce, aad, aad.length, out, 0, size, opened, 2));
      assertArrayEquals(plain, range(opened, 2, size), size + " B opened");
      assertEquals(0, opened.array()[0], "written before the slice");
    }
  }

  @Test
  void shouldSealInPlaceAndAcrossAPartialOverlap() throws Exception {
    byte[] plain = bytes(1000);
    byte[] expected = jdk(Cipher.ENCRYPT_MODE, key, plain);
    ByteBuffer same = ByteBuffer.allocateDirect(1100).put(0, plain);
    gcm.seal(key, nonce, aad, aad.length, same, 0, 1000, same, 0); // in == out
    assertArrayEquals(expected, range(same, 0, 1016));
    ByteBuffer shifted = ByteBuffer.allocateDirect(1100).put(0, plain);
    gcm.seal(key, nonce, aad, aad.length, shifted, 0, 1000, shifted, 24); // the record layer's
    assertArrayEquals(expected, range(shifted, 24, 1016));
  }

  @Test
  void shouldLeaveNoPlaintextInItsScratchAfterSealing() throws Exception {
    // under and over the wipe's two ways (1 KiB), and under the size a heap array is pinned from
    for (int size : new int[] {16, 300, 1024, 1025, 4096, NativeGcm.PIN_FROM - 1}) {
      byte[] plain = bytes(size);
      byte[] expected = jdk(Cipher.ENCRYPT_MODE, key, plain);
      ByteBuffer direct = ByteBuffer.allocateDirect(size + 16); // heap in, direct out
      gcm.seal(key, nonce, aad, aad.length, ByteBuffer.wrap(plain), 0, size, direct, 0);
      assertArrayEquals(expected, range(direct, 0, size + 16), "heap to direct, " + size);
      assertNoCopyOf(plain, gcm.scratchForTest(), "heap to direct, " + size);

      ByteBuffer overlap = ByteBuffer.allocateDirect(size + 40).put(0, plain); // copied first
      gcm.seal(key, nonce, aad, aad.length, overlap, 0, size, overlap, 24);
      assertArrayEquals(expected, range(overlap, 24, size + 16), "partial overlap, " + size);
      assertNoCopyOf(plain, gcm.scratchForTest(), "partial overlap, " + size);

      ByteBuffer heap = ByteBuffer.allocate(size + 16); // sealed in place in the scratch
      gcm.seal(key, nonce, aad, aad.length, ByteBuffer.wrap(plain), 0, size, heap, 0);
      assertArrayEquals(expected, heap.array(), "heap to heap, " + size);
      assertNoCopyOf(plain, gcm.scratchForTest(), "heap to heap, " + size);
    }
  }

  @Test
  void shouldLeaveNoPlaintextInItsScratchAfterOpeningIntoAHeapBuffer() throws Exception {
    for (int size : new int[] {16, 1025, NativeGcm.PIN_FROM - 1, NativeGcm.PIN_FROM}) {
      byte[] plain = bytes(size);
      byte[] sealed = jdk(Cipher.ENCRYPT_MODE, key, plain);
      ByteBuffer out = ByteBuffer.allocate(size);
      assertTrue(gcm.open(key, nonce, aad, aad.length, ByteBuffer.wrap(sealed), 0, size, out, 0));
      assertArrayEquals(plain, out.array());
      assertNoCopyOf(plain, gcm.scratchForTest(), "opened " + size);
    }
  }

  /** Fails if {@code scratch} holds {@code plain} (or its first 16 bytes) anywhere. */
  static void assertNoCopyOf(byte[] plain, ByteBuffer scratch, String what) {
    int n = Math.min(16, plain.length);
    byte[] all = range(scratch, 0, scratch.capacity());
    for (int i = 0; i + n <= all.length; i++) {
      if (Arrays.equals(all, i, i + n, plain, 0, n)) {
        throw new AssertionError(what + ": plaintext left in the native scratch at " + i);
      }
    }
  }

  @Test
  void shouldFollowAKeyChangeAndWipeTheKeyBytes() throws Exception {
    SecretKeySpec other = key(3);
    byte[] plain = bytes(300);
    for (int i = 0; i < 4; i++) {
      SecretKeySpec k = i % 2 == 0 ? key : other;
      ByteBuffer out = ByteBuffer.allocateDirect(316);
      gcm.seal(k, nonce, aad, aad.length, ByteBuffer.wrap(plain), 0, 300, out, 0);
      assertArrayEquals(jdk(Cipher.ENCRYPT_MODE, k, plain), range(out, 0, 316), "record " + i);
      ByteBuffer back = ByteBuffer.allocate(300);
      assertTrue(gcm.open(k, nonce, aad, aad.length, out, 0, 300, back, 0));
      assertArrayEquals(plain, back.array());
    }
    assertArrayEquals(new byte[32], range(gcm.scratchForTest(), 0, 32), "key bytes left behind");
  }

  @Test
  void shouldRefuseUseAfterCloseAndWipeItsScratch() {
    ByteBuffer in = ByteBuffer.wrap(bytes(100));
    gcm.seal(key, nonce, aad, aad.length, in, 0, 100, ByteBuffer.allocateDirect(116), 0);
    ByteBuffer scratch = gcm.scratchForTest();
    gcm.close();
    gcm.close(); // idempotent
    assertArrayEquals(new byte[scratch.capacity()], range(scratch, 0, scratch.capacity()));
    assertThrows(
        IllegalStateException.class,
        () -> gcm.seal(key, nonce, aad, aad.length, in, 0, 100, ByteBuffer.allocate(116), 0));
  }

  private byte[] jdk(int mode, SecretKeySpec k, byte[] input) throws Exception {
    Cipher c = AeadProvider.jdk().newCipher();
    c.init(mode, k, new GCMParameterSpec(128, nonce));
    c.updateAAD(aad);
    return c.doFinal(input);
  }

  private static SecretKeySpec key(int seed) {
    byte[] k = new byte[32];
    new Random(seed).nextBytes(k);
    return new SecretKeySpec(k, "AES");
  }

  private byte[] bytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  private static ByteBuffer buffer(boolean direct, int n) {
    return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
  }

  private static ByteBuffer filled(boolean direct, int n, byte value) {
    ByteBuffer b = buffer(direct, n);
    for (int i = 0; i < n; i++) {
      b.put(i, value);
    }
    return b;
  }

  private static byte[] range(ByteBuffer b, int at, int n) {
    byte[] out = new byte[n];
    b.get(at, out);
    return out;
  }

  private static void assertUntouchedOutside(ByteBuffer b, int at, int n, byte value) {
    for (int i = 0; i < b.limit(); i++) {
      if (i < at || i >= at + n) {
        assertEquals(value, b.get(i), "byte " + i + " outside the range was written");
      }
    }
  }
}
