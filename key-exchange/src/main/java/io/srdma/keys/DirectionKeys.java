package io.srdma.keys;

import java.io.NotSerializableException;
import java.io.ObjectOutputStream;
import javax.crypto.SecretKey;

/**
 * The keys of one direction in one epoch: an AES-256 key for AES-GCM and a 4-byte nonce prefix. The
 * 12-byte GCM nonce of a record is {@code prefix ‖ sequence} (8 bytes, big-endian); the caller
 * keeps sequences strictly increasing so no nonce repeats under one key.
 *
 * <p>{@link #close()} wipes both. Neither ever appears in {@link #toString()}.
 */
public final class DirectionKeys implements AutoCloseable {
  /** Length of the AES key. */
  public static final int KEY_LENGTH = 32;

  /** Length of the nonce prefix. */
  public static final int NONCE_PREFIX_LENGTH = 4;

  /** Length of a full GCM nonce. */
  public static final int NONCE_LENGTH = 12;

  private final Direction direction;
  private final int epoch;
  private final byte[] key;
  private final byte[] noncePrefix;
  private final AesKey aesKey = new AesKey();
  private volatile boolean closed;

  DirectionKeys(Direction direction, int epoch, byte[] key, byte[] noncePrefix) {
    this.direction = direction;
    this.epoch = epoch;
    this.key = key;
    this.noncePrefix = noncePrefix;
  }

  /**
   * Keys from raw material that did not come from a key schedule: a region key that a host
   * generated and hands to the readers of its records (docs/data-plane.md). The arrays are copied;
   * wipe yours.
   *
   * @param direction the direction the records travel
   * @param epoch the key's generation
   * @param key {@value #KEY_LENGTH} bytes of AES-256 key
   * @param noncePrefix {@value #NONCE_PREFIX_LENGTH} bytes
   * @return keys owning a copy of the material
   * @throws IllegalArgumentException naming a wrong length or a negative epoch
   */
  public static DirectionKeys fromMaterial(
      Direction direction, int epoch, byte[] key, byte[] noncePrefix) {
    if (direction == null || epoch < 0) {
      throw new IllegalArgumentException("direction required and epoch must be >= 0");
    }
    if (key == null || key.length != KEY_LENGTH) {
      throw new IllegalArgumentException("key must be " + KEY_LENGTH + " bytes");
    }
    if (noncePrefix == null || noncePrefix.length != NONCE_PREFIX_LENGTH) {
      throw new IllegalArgumentException("nonce prefix must be " + NONCE_PREFIX_LENGTH + " bytes");
    }
    return new DirectionKeys(direction, epoch, key.clone(), noncePrefix.clone());
  }

  /** The direction these keys protect. */
  public Direction direction() {
    return direction;
  }

  /** The epoch these keys belong to. */
  public int epoch() {
    return epoch;
  }

  /**
   * The AES key for {@code Cipher.init}. Its {@code getEncoded()} returns a fresh copy and fails
   * once these keys are closed; {@code destroy()} closes these keys.
   */
  public SecretKey aesKey() {
    checkOpen();
    return aesKey;
  }

  /** The nonce prefix as a big-endian int. */
  public int noncePrefix() {
    checkOpen();
    return ((noncePrefix[0] & 0xff) << 24)
        | ((noncePrefix[1] & 0xff) << 16)
        | ((noncePrefix[2] & 0xff) << 8)
        | (noncePrefix[3] & 0xff);
  }

  /** Writes the 12-byte nonce {@code prefix ‖ sequence} into {@code out} at {@code offset}. */
  public void writeNonce(long sequence, byte[] out, int offset) {
    checkOpen();
    System.arraycopy(noncePrefix, 0, out, offset, NONCE_PREFIX_LENGTH);
    for (int i = 0; i < 8; i++) {
      out[offset + NONCE_PREFIX_LENGTH + i] = (byte) (sequence >>> (56 - 8 * i));
    }
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  /** Wipes the key and the nonce prefix. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    Bytes.wipe(key);
    Bytes.wipe(noncePrefix);
  }

  /** The key array itself, for tests that check it was wiped. */
  byte[] keyArrayForTest() {
    return key;
  }

  /** The nonce prefix array itself, for tests that check it was wiped. */
  byte[] noncePrefixArrayForTest() {
    return noncePrefix;
  }

  private void checkOpen() {
    if (closed) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CLOSED, "keys of epoch " + epoch + " are closed");
    }
  }

  @Override
  public String toString() {
    return "DirectionKeys[" + direction + ", epoch " + epoch + (closed ? ", closed]" : "]");
  }

  /** A view of the key for the JCA; never serialised, never printed. */
  private final class AesKey implements SecretKey {
    private static final long serialVersionUID = 1L;

    @Override
    public String getAlgorithm() {
      return "AES";
    }

    @Override
    public String getFormat() {
      return "RAW";
    }

    @Override
    public byte[] getEncoded() {
      synchronized (DirectionKeys.this) {
        checkOpen();
        return key.clone();
      }
    }

    @Override
    public void destroy() {
      DirectionKeys.this.close();
    }

    @Override
    public boolean isDestroyed() {
      return closed;
    }

    @Override
    public String toString() {
      return "AES-256 key of " + DirectionKeys.this;
    }

    private void writeObject(ObjectOutputStream out) throws NotSerializableException {
      throw new NotSerializableException("key material is not serialisable");
    }
  }
}
