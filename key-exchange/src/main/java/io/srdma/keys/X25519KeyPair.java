package io.srdma.keys;

import java.security.SecureRandom;
import java.util.Objects;
import org.bouncycastle.math.ec.rfc7748.X25519;

/**
 * An ephemeral X25519 key pair (RFC 7748) for one session; Bouncy Castle's constant-time
 * implementation. Send {@link #publicKey()} to the peer; pass the pair to {@link
 * KeySchedule.Builder#localKey}, which uses it once and closes it. {@link #close()} wipes the
 * private scalar.
 */
public final class X25519KeyPair implements AutoCloseable {
  /** Length of public keys, private keys and shared secrets. */
  public static final int KEY_LENGTH = 32;

  private final byte[] privateKey;
  private final byte[] publicKey;
  private boolean closed;

  private X25519KeyPair(byte[] privateKey) {
    this.privateKey = privateKey;
    this.publicKey = new byte[KEY_LENGTH];
    X25519.generatePublicKey(privateKey, 0, publicKey, 0);
  }

  /** A fresh key pair. */
  public static X25519KeyPair generate(SecureRandom random) {
    byte[] k = new byte[KEY_LENGTH];
    X25519.generatePrivateKey(Objects.requireNonNull(random, "random"), k);
    return new X25519KeyPair(k);
  }

  /** A key pair from a given scalar (test vectors); the array is copied. */
  static X25519KeyPair fromPrivateKey(byte[] scalar) {
    if (scalar.length != KEY_LENGTH) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT, "X25519 private key must be 32 bytes");
    }
    return new X25519KeyPair(scalar.clone());
  }

  /** A copy of the public key, to send to the peer. */
  public synchronized byte[] publicKey() {
    checkOpen();
    return publicKey.clone();
  }

  /**
   * X25519(private, peerPublic). The caller wipes the result.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_PUBLIC_KEY} if the peer's
   *     key has the wrong length or is of low order (all-zero shared secret, RFC 7748 §6.1)
   */
  synchronized byte[] agree(byte[] peerPublic) {
    checkOpen();
    if (peerPublic == null || peerPublic.length != KEY_LENGTH) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_PUBLIC_KEY, "peer X25519 public key must be 32 bytes");
    }
    byte[] shared = new byte[KEY_LENGTH];
    if (!X25519.calculateAgreement(privateKey, 0, peerPublic, 0, shared, 0)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_PUBLIC_KEY,
          "peer X25519 public key is of low order (all-zero shared secret)");
    }
    return shared;
  }

  /** Whether {@link #close()} was called. */
  public synchronized boolean isClosed() {
    return closed;
  }

  /** The private scalar, for tests that check it was wiped. */
  byte[] privateKeyArrayForTest() {
    return privateKey;
  }

  /** Wipes the private key. Idempotent. */
  @Override
  public synchronized void close() {
    Bytes.wipe(privateKey);
    closed = true;
  }

  private void checkOpen() {
    if (closed) {
      throw new KeyExchangeException(KeyExchangeException.Reason.CLOSED, "X25519 key pair closed");
    }
  }

  @Override
  public String toString() {
    return "X25519KeyPair[" + (closed ? "closed" : "open") + "]";
  }
}
