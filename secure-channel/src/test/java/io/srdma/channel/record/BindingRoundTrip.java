package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * One record through two bindings of the same library (downcalls and jnr-ffi): both seal the same
 * bytes, each opens the other's, and a flipped bit in the tag (its first, then its last) is
 * refused. For {@link GcryptDowncallsTest}, {@link OpensslDowncallsTest} and {@link
 * IpsecMbDowncallsTest}.
 */
final class BindingRoundTrip {
  private static final SecureRandom RANDOM = new SecureRandom();

  private BindingRoundTrip() {}

  /** {@code sealer} and {@code opener} seal a fresh random record of {@code size} bytes alike. */
  static void check(NativeGcm sealer, NativeGcm opener, int size, boolean heap) {
    byte[] k = new byte[32];
    byte[] nonce = new byte[12];
    byte[] aad = new byte[60];
    byte[] plain = new byte[size];
    RANDOM.nextBytes(k);
    RANDOM.nextBytes(nonce);
    RANDOM.nextBytes(aad);
    RANDOM.nextBytes(plain);
    SecretKey key = new SecretKeySpec(k, "AES");
    ByteBuffer in = heap ? ByteBuffer.wrap(plain) : ByteBuffer.allocateDirect(size).put(plain);
    ByteBuffer sealedByA = buffer(size + NativeGcm.TAG, heap);
    ByteBuffer sealedByB = buffer(size + NativeGcm.TAG, heap);
    sealer.seal(key, nonce, aad, aad.length, in, 0, size, sealedByA, 0);
    opener.seal(key, nonce, aad, aad.length, in, 0, size, sealedByB, 0);
    assertArrayEquals(bytes(sealedByB), bytes(sealedByA), "sealed " + size + " B, heap " + heap);
    ByteBuffer out = buffer(size, heap);
    assertTrue(opener.open(key, nonce, aad, aad.length, sealedByA, 0, size, out, 0));
    assertArrayEquals(plain, bytes(out), "opened " + size + " B, heap " + heap);
    for (int at : new int[] {size, size + NativeGcm.TAG - 1}) { // the tag's first and last byte
      int bit = at == size ? 1 : 0x80;
      sealedByA.put(at, (byte) (sealedByA.get(at) ^ bit));
      assertFalse(
          sealer.open(key, nonce, aad, aad.length, sealedByA, 0, size, buffer(size, heap), 0),
          "a flipped tag bit at " + at);
      sealedByA.put(at, (byte) (sealedByA.get(at) ^ bit));
    }
  }

  private static ByteBuffer buffer(int size, boolean heap) {
    return heap ? ByteBuffer.allocate(size) : ByteBuffer.allocateDirect(size);
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] a = new byte[b.capacity()];
    b.duplicate().clear().get(a);
    return a;
  }
}
