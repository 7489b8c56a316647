package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link NativeGcm} when its library fails in the middle of a record: a seal the library refuses
 * and an open whose library throws after it decrypted leave no plaintext in the native scratch
 * either. libcrypto, wrapped; skipped, saying so, where it is missing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NativeGcmFailureTest {
  private static final int MAX = 8192;

  private final Random random = new Random(20261206);
  private final SecretKeySpec key = new SecretKeySpec(bytes(32), "AES");
  private final byte[] nonce = bytes(12);
  private final byte[] aad = bytes(60);

  @Test
  void shouldWipeThePlaintextWhenTheLibraryFailsToSeal() {
    byte[] plain = bytes(3000);
    try (NativeGcm gcm = new NativeGcm(new Failing(library(), true), MAX)) {
      // heap to heap is sealed in place in the scratch: a failed seal leaves the plaintext there
      assertThrows(
          AeadException.class,
          () ->
              gcm.seal(
                  key,
                  nonce,
                  aad,
                  aad.length,
                  ByteBuffer.wrap(plain),
                  0,
                  plain.length,
                  ByteBuffer.allocate(plain.length + 16),
                  0));
      NativeGcmTest.assertNoCopyOf(plain, gcm.scratchForTest(), "failed seal");
    }
  }

  @Test
  void shouldWipeThePlaintextWhenTheLibraryThrowsAfterOpening() {
    byte[] plain = bytes(3000);
    ByteBuffer sealed = ByteBuffer.allocateDirect(plain.length + 16);
    try (NativeGcm gcm = new NativeGcm(library(), MAX)) {
      gcm.seal(key, nonce, aad, aad.length, ByteBuffer.wrap(plain), 0, plain.length, sealed, 0);
    }
    try (NativeGcm gcm = new NativeGcm(new Failing(library(), false), MAX)) {
      ByteBuffer out = ByteBuffer.allocate(plain.length);
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> gcm.open(key, nonce, aad, aad.length, sealed, 0, plain.length, out, 0));
      assertEquals("after opening", e.getMessage());
      NativeGcmTest.assertNoCopyOf(plain, gcm.scratchForTest(), "open that threw");
    }
  }

  private static GcmLibrary library() {
    try {
      return LibCrypto.gcm();
    } catch (AeadException e) {
      return Assumptions.abort("libcrypto (OpenSSL 3 or 1.1) is not loadable here: " + e);
    }
  }

  private byte[] bytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  /** libcrypto that refuses every seal, or throws after every open (the plaintext written). */
  private static final class Failing extends ForwardingGcmLibrary {
    private final boolean failSeal;

    Failing(GcmLibrary real, boolean failSeal) {
      super(real);
      this.failSeal = failSeal;
    }

    @Override
    public String name() {
      return "failing " + real.name();
    }

    @Override
    public boolean seal(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        ByteBuffer pinnedIn,
        long out,
        int length,
        long word) {
      return !failSeal && real.seal(ctx, nonce, aad, aadLength, in, pinnedIn, out, length, word);
    }

    @Override
    public int open(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        long out,
        ByteBuffer pinnedOut,
        int length,
        long word) {
      real.open(ctx, nonce, aad, aadLength, in, out, pinnedOut, length, word);
      throw new IllegalStateException("after opening");
    }
  }
}
