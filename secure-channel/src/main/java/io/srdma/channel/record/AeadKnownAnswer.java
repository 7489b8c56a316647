package io.srdma.channel.record;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The known-answer test a provider passes before the data path may use it: the published
 * AES-256-GCM vector (McGrew and Viega, "The Galois/Counter Mode of Operation", test case 16:
 * 256-bit key, 96-bit IV, 60 bytes of plaintext, 20 bytes of associated data) sealed to the
 * published ciphertext and tag and opened back, through the same calls the record layer makes
 * (init, AAD, doFinal into an array at an offset); then a flipped ciphertext bit, a flipped tag bit
 * and a changed associated-data byte must each be refused with {@link AEADBadTagException}. A
 * native-memory provider (openssl, gcrypt, ipsec-mb) runs the same vector through {@link
 * NativeGcm}, from and to direct buffers at offsets (its data path) and heap ones (its scratch
 * path); each refusal must leave the destination zeroed.
 *
 * <p>Stateless; thread-safe.
 */
final class AeadKnownAnswer {
  private static final HexFormat HEX = HexFormat.of();
  private static final byte[] KEY =
      HEX.parseHex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
  private static final byte[] IV = HEX.parseHex("cafebabefacedbaddecaf888");
  private static final byte[] PLAIN =
      HEX.parseHex(
          "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
              + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
  private static final byte[] AAD = HEX.parseHex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
  private static final byte[] SEALED =
      HEX.parseHex(
          "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
              + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
              + "76fc6ece0f4e1768cddf8853bb2d551b");

  private AeadKnownAnswer() {}

  /**
   * Runs the test on a fresh cipher of {@code provider}.
   *
   * @throws AeadException naming the step that failed
   */
  static void check(AeadProvider provider) {
    if (provider.nativeMemory()) {
      checkNative(provider);
      return;
    }
    Cipher cipher = provider.newCipher();
    SecretKeySpec key = new SecretKeySpec(KEY, "AES");
    byte[] out = new byte[SEALED.length + 3];
    try {
      cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, IV));
      cipher.updateAAD(AAD, 0, AAD.length);
      int n = cipher.doFinal(PLAIN, 0, PLAIN.length, out, 3);
      if (n != SEALED.length || !Arrays.equals(out, 3, 3 + n, SEALED, 0, SEALED.length)) {
        throw fail(provider, "sealed the known-answer vector to the wrong ciphertext or tag");
      }
      byte[] opened = new byte[PLAIN.length + 1];
      if (open(cipher, key, SEALED, AAD, opened) != PLAIN.length
          || !Arrays.equals(opened, 1, 1 + PLAIN.length, PLAIN, 0, PLAIN.length)) {
        throw fail(provider, "opened the known-answer vector to the wrong plaintext");
      }
      byte[] bad = SEALED.clone();
      bad[7] ^= 1;
      refused(provider, cipher, key, bad, AAD, "a flipped ciphertext bit");
      bad = SEALED.clone();
      bad[bad.length - 1] ^= (byte) 0x80;
      refused(provider, cipher, key, bad, AAD, "a flipped tag bit");
      byte[] aad = AAD.clone();
      aad[0] ^= 1;
      refused(provider, cipher, key, SEALED, aad, "changed associated data");
    } catch (GeneralSecurityException | RuntimeException e) {
      if (e instanceof AeadException a) {
        throw a;
      }
      throw new AeadException(
          provider.name() + " failed the AES-256-GCM known-answer test: " + e, e);
    }
  }

  private static int open(Cipher cipher, SecretKeySpec key, byte[] sealed, byte[] aad, byte[] to)
      throws GeneralSecurityException {
    cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, IV));
    cipher.updateAAD(aad, 0, aad.length);
    return cipher.doFinal(sealed, 0, sealed.length, to, 1);
  }

  private static void refused(
      AeadProvider provider,
      Cipher cipher,
      SecretKeySpec key,
      byte[] sealed,
      byte[] aad,
      String what)
      throws GeneralSecurityException {
    try {
      open(cipher, key, sealed, aad, new byte[PLAIN.length + 1]);
    } catch (AEADBadTagException expected) {
      return;
    }
    throw fail(provider, "opened a record with " + what);
  }

  private static void checkNative(AeadProvider provider) {
    try (NativeGcm gcm = provider.newNativeGcm(PLAIN.length)) {
      SecretKeySpec key = new SecretKeySpec(KEY, "AES");
      for (boolean direct : new boolean[] {true, false}) {
        ByteBuffer plain = buffer(direct, PLAIN.length + 5).put(5, PLAIN);
        ByteBuffer out = buffer(direct, SEALED.length + 3);
        gcm.seal(key, IV, AAD, AAD.length, plain, 5, PLAIN.length, out, 3);
        byte[] got = new byte[SEALED.length];
        out.get(3, got);
        if (!Arrays.equals(got, SEALED)) {
          throw fail(provider, "sealed the known-answer vector to the wrong ciphertext or tag");
        }
        ByteBuffer sealed = buffer(direct, SEALED.length + 2).put(2, SEALED);
        ByteBuffer opened = buffer(direct, PLAIN.length + 1);
        byte[] back = new byte[PLAIN.length];
        boolean authentic = gcm.open(key, IV, AAD, AAD.length, sealed, 2, PLAIN.length, opened, 1);
        opened.get(1, back);
        if (!authentic || !Arrays.equals(back, PLAIN)) {
          throw fail(provider, "opened the known-answer vector to the wrong plaintext");
        }
        byte[] bad = SEALED.clone();
        bad[7] ^= 1;
        refusedNative(provider, gcm, key, bad, AAD, direct, "a flipped ciphertext bit");
        bad = SEALED.clone();
        bad[bad.length - 1] ^= (byte) 0x80;
        refusedNative(provider, gcm, key, bad, AAD, direct, "a flipped tag bit");
        byte[] aad = AAD.clone();
        aad[0] ^= 1;
        refusedNative(provider, gcm, key, SEALED, aad, direct, "changed associated data");
      }
    } catch (RuntimeException e) {
      if (e instanceof AeadException a) {
        throw a;
      }
      throw new AeadException(
          provider.name() + " failed the AES-256-GCM known-answer test: " + e, e);
    }
  }

  private static void refusedNative(
      AeadProvider provider,
      NativeGcm gcm,
      SecretKeySpec key,
      byte[] sealed,
      byte[] aad,
      boolean direct,
      String what) {
    ByteBuffer in = buffer(direct, sealed.length).put(0, sealed);
    ByteBuffer out = buffer(direct, PLAIN.length);
    for (int i = 0; i < PLAIN.length; i++) {
      out.put(i, (byte) 0x5a);
    }
    if (gcm.open(key, IV, aad, aad.length, in, 0, PLAIN.length, out, 0)) {
      throw fail(provider, "opened a record with " + what);
    }
    byte expected = direct ? 0 : (byte) 0x5a; // a heap destination is never written before the tag
    for (int i = 0; i < PLAIN.length; i++) {
      if (out.get(i) != expected) {
        throw fail(provider, "left bytes in the destination after refusing " + what);
      }
    }
  }

  private static ByteBuffer buffer(boolean direct, int size) {
    return direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
  }

  private static AeadException fail(AeadProvider provider, String what) {
    return new AeadException(
        provider.name() + " failed the AES-256-GCM known-answer test: it " + what);
  }
}
