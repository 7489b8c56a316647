package io.srdma.channel.record;

import io.srdma.keys.DirectionKeys;

/**
 * The shape of the region key material a READ grant (GRANT) and a rotation (REGION_KEY) carry:
 * {@code u32 generation ‖ AES-256 key (32) ‖ nonce prefix (4) ‖ owner's Ed25519 public key (32)},
 * {@value #LENGTH} bytes, inside TLS only.
 */
public final class RegionKeyMaterial {
  /** Offset of the AES key. */
  static final int KEY_OFFSET = 4;

  /** Offset of the nonce prefix. */
  static final int PREFIX_OFFSET = KEY_OFFSET + DirectionKeys.KEY_LENGTH;

  /** Offset of the owner's public key. */
  static final int OWNER_OFFSET = PREFIX_OFFSET + DirectionKeys.NONCE_PREFIX_LENGTH;

  /** Length of the material. */
  public static final int LENGTH = OWNER_OFFSET + OwnerSigning.PUBLIC_KEY_LENGTH;

  private RegionKeyMaterial() {}

  /** Encodes material; the caller wipes its arrays and the result when done. */
  public static byte[] encode(int generation, byte[] key, byte[] prefix, byte[] ownerPublicKey) {
    if (generation < 0
        || key.length != DirectionKeys.KEY_LENGTH
        || prefix.length != DirectionKeys.NONCE_PREFIX_LENGTH
        || ownerPublicKey.length != OwnerSigning.PUBLIC_KEY_LENGTH) {
      throw new RecordException(RecordException.Reason.BAD_ARGUMENT, "bad region key material");
    }
    byte[] m = new byte[LENGTH];
    m[0] = (byte) (generation >>> 24);
    m[1] = (byte) (generation >>> 16);
    m[2] = (byte) (generation >>> 8);
    m[3] = (byte) generation;
    System.arraycopy(key, 0, m, KEY_OFFSET, key.length);
    System.arraycopy(prefix, 0, m, PREFIX_OFFSET, prefix.length);
    System.arraycopy(ownerPublicKey, 0, m, OWNER_OFFSET, ownerPublicKey.length);
    return m;
  }

  /**
   * The generation the material is for.
   *
   * @throws RecordException BAD_ARGUMENT when the material is not {@value #LENGTH} bytes
   */
  public static int generation(byte[] material) {
    if (material.length != LENGTH) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT,
          "region key material of " + material.length + " bytes, expected " + LENGTH);
    }
    return ((material[0] & 0xff) << 24)
        | ((material[1] & 0xff) << 16)
        | ((material[2] & 0xff) << 8)
        | (material[3] & 0xff);
  }
}
