package io.srdma.keys;

import java.security.MessageDigest;

/**
 * All keys of one epoch of a session, from one party's point of view: the keys it sends with, the
 * keys it receives with, and the key confirmation values.
 *
 * <p>Key confirmation: each party sends {@link #confirmation()} to the other over the TLS
 * connection and passes what it receives to {@link #verifyPeerConfirmation}. The two values differ
 * per role, so a reflected value fails. They match only if both parties agree on every input of the
 * schedule: the X25519 secret, the TLS binding, the session id, both QP numbers and both public
 * keys.
 */
public final class SessionKeys implements AutoCloseable {
  /** Length of a key confirmation value. */
  public static final int CONFIRMATION_LENGTH = 32;

  private final Role role;
  private final int epoch;
  private final DirectionKeys send;
  private final DirectionKeys receive;
  private final byte[] localConfirmation;
  private final byte[] peerConfirmation;
  private volatile boolean closed;

  SessionKeys(
      Role role,
      int epoch,
      DirectionKeys send,
      DirectionKeys receive,
      byte[] localConfirmation,
      byte[] peerConfirmation) {
    this.role = role;
    this.epoch = epoch;
    this.send = send;
    this.receive = receive;
    this.localConfirmation = localConfirmation;
    this.peerConfirmation = peerConfirmation;
  }

  /** The epoch, starting at 0. */
  public int epoch() {
    return epoch;
  }

  /** This party's role. */
  public Role role() {
    return role;
  }

  /** The keys this party seals with. */
  public DirectionKeys send() {
    checkOpen();
    return send;
  }

  /** The keys this party opens the peer's records with. */
  public DirectionKeys receive() {
    checkOpen();
    return receive;
  }

  /** The keys of one direction. */
  public DirectionKeys keys(Direction direction) {
    return direction == role.sendDirection() ? send() : receive();
  }

  /** A copy of this party's confirmation value, to send to the peer. */
  public synchronized byte[] confirmation() {
    checkOpen();
    return localConfirmation.clone();
  }

  /**
   * Checks the peer's confirmation value in constant time. On mismatch these keys are closed and
   * the session must be aborted.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#KEY_CONFIRMATION_FAILED}
   */
  public void verifyPeerConfirmation(byte[] received) {
    boolean ok;
    synchronized (this) {
      checkOpen();
      ok =
          received != null
              && received.length == CONFIRMATION_LENGTH
              && MessageDigest.isEqual(peerConfirmation, received);
    }
    if (!ok) {
      close();
      throw new KeyExchangeException(
          KeyExchangeException.Reason.KEY_CONFIRMATION_FAILED,
          "the peer derived different keys for epoch " + epoch + "; abort the session");
    }
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  /** Wipes every key of this epoch. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    send.close();
    receive.close();
    Bytes.wipe(localConfirmation);
    Bytes.wipe(peerConfirmation);
  }

  byte[] localConfirmationArrayForTest() {
    return localConfirmation;
  }

  private void checkOpen() {
    if (closed) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CLOSED, "keys of epoch " + epoch + " are closed");
    }
  }

  @Override
  public String toString() {
    return "SessionKeys[" + role + ", epoch " + epoch + (closed ? ", closed]" : "]");
  }
}
