package io.srdma.channel.record;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.SignatureException;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;

/**
 * The region owner's Ed25519 signing key (JDK provider): only the host holds the private half;
 * readers get the 32-byte public key with the region key material, so a peer that holds the
 * symmetric region key (and WRITE access) still cannot make an owner record a reader accepts.
 * Stateless; thread-safe.
 */
public final class OwnerSigning {
  /** Length of a raw Ed25519 public key. */
  public static final int PUBLIC_KEY_LENGTH = 32;

  /** Length of an Ed25519 signature. */
  public static final int SIGNATURE_LENGTH = 64;

  /** X.509 SubjectPublicKeyInfo prefix of an Ed25519 key (RFC 8410): the raw key follows. */
  private static final byte[] X509_PREFIX = {
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00
  };

  private static final byte[] DOMAIN =
      "srdma owner record v1\0".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  private OwnerSigning() {}

  /** A fresh key pair. */
  public static KeyPair generate(SecureRandom random) {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("Ed25519");
      g.initialize(255, random);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK has no Ed25519", e);
    }
  }

  /** The 32 raw bytes of an Ed25519 public key. */
  public static byte[] raw(PublicKey key) {
    byte[] encoded = key.getEncoded();
    if (encoded.length != X509_PREFIX.length + PUBLIC_KEY_LENGTH
        || !Arrays.equals(encoded, 0, X509_PREFIX.length, X509_PREFIX, 0, X509_PREFIX.length)) {
      throw new RecordException(RecordException.Reason.BAD_ARGUMENT, "not an Ed25519 public key");
    }
    return Arrays.copyOfRange(encoded, X509_PREFIX.length, encoded.length);
  }

  /**
   * The public key of 32 raw bytes.
   *
   * @throws RecordException BAD_ARGUMENT when they are not a valid key
   */
  public static PublicKey publicKey(byte[] raw, int offset) {
    byte[] encoded = new byte[X509_PREFIX.length + PUBLIC_KEY_LENGTH];
    System.arraycopy(X509_PREFIX, 0, encoded, 0, X509_PREFIX.length);
    System.arraycopy(raw, offset, encoded, X509_PREFIX.length, PUBLIC_KEY_LENGTH);
    try {
      return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(encoded));
    } catch (GeneralSecurityException e) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT, "owner public key is not a valid Ed25519 key");
    }
  }

  static Signature newSignature() {
    try {
      return Signature.getInstance("Ed25519");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK has no Ed25519", e);
    }
  }

  /**
   * Feeds what an owner record's signature covers: a domain label, the owner binding (tenant,
   * region, generation, version), the offset in the region and the sealed record (header,
   * ciphertext, tag).
   */
  static void update(
      Signature s, RecordBinding binding, long remoteOffset, byte[] record, int recordLength)
      throws SignatureException {
    byte[] b = new byte[binding.encodedLength() + 8];
    binding.copyTo(b, 0);
    for (int i = 0; i < 8; i++) {
      b[binding.encodedLength() + i] = (byte) (remoteOffset >>> (56 - 8 * i));
    }
    s.update(DOMAIN);
    s.update(b);
    s.update(record, 0, recordLength);
  }
}
