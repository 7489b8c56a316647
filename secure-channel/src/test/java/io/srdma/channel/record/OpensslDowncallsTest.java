package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * libcrypto's per-record EVP calls as foreign-function downcalls ({@link OpensslDowncalls}): on
 * Java 22+ they are what the data path uses, said in the provider's description, and they produce
 * and accept exactly what the jnr-ffi binding does, at every record size on both sides of the
 * pinned path (so every C {@code int} argument reaches libcrypto intact); on Java 17 the
 * description says jnr-ffi and why. {@link NativeGcmTest} checks the bytes against the JDK's GCM
 * through whichever binding is in use. CI runs this class on Java 17 (the build's JVM) and on
 * Temurin 25 (secure-channel's {@code java25-downcalls} profile).
 */
class OpensslDowncallsTest {
  private final SecureRandom random = new SecureRandom();

  @Test
  void theDowncallsOpenTheLibraryByLibCryptosNamesInItsOrder() {
    assertArrayEquals(LibCrypto.NAMES, OpensslDowncalls.NAMES);
  }

  @Test
  void theBindingInUseIsNamedAndIsTheDowncallsFromJava22() {
    AeadProvider openssl = opensslOrSkip();
    int feature = Runtime.version().feature();
    if (feature >= 22 && !"jnr".equals(System.getProperty(OpensslDowncalls.PROPERTY))) {
      assertNull(OpensslDowncalls.unavailable());
      assertEquals("FFM downcalls", LibCrypto.binding());
      assertTrue(openssl.description().contains("through FFM downcalls"), openssl.description());
    } else {
      assertTrue(LibCrypto.binding().startsWith("jnr-ffi ("), LibCrypto.binding());
      assertTrue(openssl.description().contains("through jnr-ffi"), openssl.description());
      if (feature >= 22) {
        assertTrue(
            openssl
                .description()
                .contains("not downcalls: -D" + OpensslDowncalls.PROPERTY + "=jnr"),
            openssl.description());
      } else {
        assertEquals(
            "Java " + feature + " has no foreign-function API (22+)",
            OpensslDowncalls.unavailable());
      }
    }
  }

  @Test
  void downcallsAndJnrSealAndOpenTheSameRecords() {
    opensslOrSkip();
    Assumptions.assumeTrue(
        OpensslDowncalls.unavailable() == null,
        () -> "needs the downcalls (Java 22+): " + OpensslDowncalls.unavailable());
    GcmLibrary downcalls = LibCrypto.gcm();
    GcmLibrary jnr = LibCrypto.jnrForTest();
    assertFalse(downcalls == jnr);
    int max = 2 * NativeGcm.PIN_FROM;
    try (NativeGcm a = new NativeGcm(downcalls, max);
        NativeGcm b = new NativeGcm(jnr, max)) {
      for (int size : new int[] {0, 1, 64, 4096, NativeGcm.PIN_FROM - 1, NativeGcm.PIN_FROM, max}) {
        for (boolean heap : new boolean[] {false, true}) {
          roundTrip(a, b, size, heap);
          roundTrip(b, a, size, heap);
        }
      }
    }
  }

  /** {@code sealer} seals, {@code opener} opens: same bytes both ways, a flipped bit refused. */
  private void roundTrip(NativeGcm sealer, NativeGcm opener, int size, boolean heap) {
    byte[] k = new byte[32];
    byte[] nonce = new byte[12];
    byte[] aad = new byte[60];
    byte[] plain = new byte[size];
    random.nextBytes(k);
    random.nextBytes(nonce);
    random.nextBytes(aad);
    random.nextBytes(plain);
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
    sealedByA.put(size, (byte) (sealedByA.get(size) ^ 1)); // the tag's first bit
    assertFalse(
        sealer.open(key, nonce, aad, aad.length, sealedByA, 0, size, buffer(size, heap), 0));
  }

  private static ByteBuffer buffer(int size, boolean heap) {
    return heap ? ByteBuffer.allocate(size) : ByteBuffer.allocateDirect(size);
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] a = new byte[b.capacity()];
    b.duplicate().clear().get(a);
    return a;
  }

  private static AeadProvider opensslOrSkip() {
    try {
      return AeadProvider.openssl();
    } catch (AeadException e) {
      Assumptions.abort("libcrypto (OpenSSL 3.x or 1.1) is not loadable here: " + e);
      return null;
    }
  }
}
