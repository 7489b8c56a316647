package io.srdma.keys;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * The session key schedule: ephemeral X25519 both ways, HKDF-SHA256 bound to the TLS connection,
 * the session id and both QP numbers; one AES-256 key and one 4-byte nonce prefix per direction;
 * epochs for rekeying. docs/keys.md gives every label and input byte by byte.
 *
 * <pre>
 * shared    = X25519(own private key, peer public key)           (all-zero refused)
 * context   = "srdma/v1" ‖ u8 binding kind ‖ u8 len(session id) ‖ session id
 *             ‖ u32 initiator QPN ‖ u32 responder QPN ‖ initiator public key ‖ responder public key
 * prk       = HKDF-Extract(salt = TLS binding (32 bytes), ikm = shared)
 * secret[0] = HKDF-Expand(prk, "srdma/v1 session" ‖ 0x00 ‖ context, 32)
 * per epoch e (E = u32 e):
 *   key[d]   = HKDF-Expand(secret[e], "srdma/v1 key "   + d ‖ 0x00 ‖ E, 32)    d = i2r, r2i
 *   nonce[d] = HKDF-Expand(secret[e], "srdma/v1 nonce " + d ‖ 0x00 ‖ E, 4)
 *   confirm[r] = HKDF-Expand(secret[e], "srdma/v1 confirm " + r ‖ 0x00 ‖ E, 32) r = initiator, responder
 * secret[e+1] = HKDF-Expand(secret[e], "srdma/v1 next epoch" ‖ 0x00 ‖ E, 32)
 * </pre>
 *
 * <p>Use, on each side, once the TLS handshake is done and the peers have swapped their X25519
 * public keys (and QP numbers) in the channel's own frames:
 *
 * <pre>{@code
 * try (KeySchedule ks = KeySchedule.builder()
 *     .role(Role.INITIATOR)
 *     .localKey(myEphemeral)              // closed by establish()
 *     .peerPublicKey(peerEphemeralPublic)
 *     .binding(peer.binding(Role.INITIATOR)) // closed by establish()
 *     .sessionId(sessionId)
 *     .initiatorQpn(myQpn).responderQpn(peerQpn)
 *     .establish()) {
 *   send(ks.current().confirmation());
 *   ks.current().verifyPeerConfirmation(receive()); // mismatch: typed error, abort
 *   DirectionKeys tx = ks.sendKeys();
 *   ...
 * }
 * }</pre>
 *
 * <p>Rekey: a party calls {@link #rekey()} and tells its peer over the control channel (or the peer
 * sees a record of epoch {@code current + 1}, for which {@link #receiveKeys(int)} already derives
 * keys without committing to them, and calls {@link #rekey()} once such a record opened). The
 * previous epoch's keys keep working for the receiving side during the grace window and are then
 * wiped ({@link #retireExpired()}, also run on every {@link #receiveKeys}). Thread-safe.
 */
public final class KeySchedule implements AutoCloseable {
  /** Default grace window for records of the previous epoch. */
  public static final Duration DEFAULT_GRACE_WINDOW = Duration.ofSeconds(5);

  /** Longest accepted session id. */
  public static final int MAX_SESSION_ID_LENGTH = 255;

  static final String CONTEXT_PREFIX = "srdma/v1";
  static final String SESSION_LABEL = "srdma/v1 session";
  static final String NEXT_EPOCH_LABEL = "srdma/v1 next epoch";
  static final String KEY_LABEL = "srdma/v1 key ";
  static final String NONCE_LABEL = "srdma/v1 nonce ";
  static final String CONFIRM_LABEL = "srdma/v1 confirm ";

  private final Role role;
  private final long graceNanos;
  private final LongSupplier nanoClock;

  private byte[] secret;
  private SessionKeys current;
  private SessionKeys previous;
  private long previousRetireAt;
  private byte[] nextSecret;
  private SessionKeys next;
  private boolean closed;

  private KeySchedule(Role role, byte[] secret0, Duration grace, LongSupplier nanoClock) {
    this.role = role;
    this.graceNanos = grace.toNanos();
    this.nanoClock = nanoClock;
    this.secret = secret0;
    this.current = deriveEpoch(role, secret0, 0);
  }

  /** A builder; all inputs except the grace window and the clock are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** This party's role. */
  public Role role() {
    return role;
  }

  /** The current epoch. */
  public synchronized int epoch() {
    checkOpen();
    return current.epoch();
  }

  /** The keys of the current epoch. */
  public synchronized SessionKeys current() {
    checkOpen();
    return current;
  }

  /** The keys to seal new records with: the current epoch's send keys. */
  public synchronized DirectionKeys sendKeys() {
    checkOpen();
    return current.send();
  }

  /**
   * The keys to open a record of {@code epoch} with: the current epoch, the previous one while its
   * grace window lasts, or the next one (derived ahead, not committed; call {@link #rekey()} once a
   * record of it opened).
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#EPOCH_REJECTED} otherwise
   */
  public synchronized DirectionKeys receiveKeys(int epoch) {
    checkOpen();
    retireExpired();
    if (epoch == current.epoch()) {
      return current.receive();
    }
    if (previous != null && epoch == previous.epoch()) {
      return previous.receive();
    }
    if (current.epoch() != Integer.MAX_VALUE && epoch == current.epoch() + 1) {
      return lookahead().receive();
    }
    throw new KeyExchangeException(
        KeyExchangeException.Reason.EPOCH_REJECTED,
        "epoch " + epoch + " is not current (" + current.epoch() + "), previous or next");
  }

  /**
   * Moves to the next epoch: its keys become current, the current ones become previous (wiped after
   * the grace window), and an older previous epoch is wiped now.
   *
   * @return the new current keys
   */
  public synchronized SessionKeys rekey() {
    checkOpen();
    lookahead();
    if (previous != null) {
      previous.close();
    }
    previous = current;
    previousRetireAt = nanoClock.getAsLong() + graceNanos;
    current = next;
    Bytes.wipe(secret);
    secret = nextSecret;
    next = null;
    nextSecret = null;
    return current;
  }

  /**
   * Wipes the previous epoch's keys if its grace window has passed. Callers with a timer may call
   * this periodically; {@link #receiveKeys} calls it too.
   *
   * @return whether keys were wiped
   */
  public synchronized boolean retireExpired() {
    if (previous != null && nanoClock.getAsLong() - previousRetireAt >= 0) {
      previous.close();
      previous = null;
      return true;
    }
    return false;
  }

  /** The previous epoch's keys while their grace window lasts, else {@code null}. */
  synchronized SessionKeys previousForTest() {
    return previous;
  }

  synchronized byte[] secretArrayForTest() {
    return secret;
  }

  private SessionKeys lookahead() {
    if (next == null) {
      int e = current.epoch();
      if (e == Integer.MAX_VALUE) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.EPOCH_EXHAUSTED, "no epoch after " + e);
      }
      nextSecret =
          Hkdf.expand(secret, Bytes.info(NEXT_EPOCH_LABEL, Bytes.u32(e)), Hkdf.HASH_LENGTH);
      next = deriveEpoch(role, nextSecret, e + 1);
    }
    return next;
  }

  static SessionKeys deriveEpoch(Role role, byte[] secret, int epoch) {
    byte[] e = Bytes.u32(epoch);
    DirectionKeys i2r = deriveDirection(secret, Direction.INITIATOR_TO_RESPONDER, epoch, e);
    DirectionKeys r2i = deriveDirection(secret, Direction.RESPONDER_TO_INITIATOR, epoch, e);
    byte[] confirmInitiator =
        Hkdf.expand(
            secret, Bytes.info(CONFIRM_LABEL + "initiator", e), SessionKeys.CONFIRMATION_LENGTH);
    byte[] confirmResponder =
        Hkdf.expand(
            secret, Bytes.info(CONFIRM_LABEL + "responder", e), SessionKeys.CONFIRMATION_LENGTH);
    return role == Role.INITIATOR
        ? new SessionKeys(role, epoch, i2r, r2i, confirmInitiator, confirmResponder)
        : new SessionKeys(role, epoch, r2i, i2r, confirmResponder, confirmInitiator);
  }

  private static DirectionKeys deriveDirection(
      byte[] secret, Direction d, int epoch, byte[] encodedEpoch) {
    byte[] key =
        Hkdf.expand(
            secret, Bytes.info(KEY_LABEL + d.label(), encodedEpoch), DirectionKeys.KEY_LENGTH);
    byte[] nonce =
        Hkdf.expand(
            secret,
            Bytes.info(NONCE_LABEL + d.label(), encodedEpoch),
            DirectionKeys.NONCE_PREFIX_LENGTH);
    return new DirectionKeys(d, epoch, key, nonce);
  }

  /** Wipes every secret and key of every epoch. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    current.close();
    if (previous != null) {
      previous.close();
    }
    if (next != null) {
      next.close();
    }
    Bytes.wipe(secret);
    Bytes.wipe(nextSecret);
  }

  /** Whether {@link #close()} was called. */
  public synchronized boolean isClosed() {
    return closed;
  }

  private void checkOpen() {
    if (closed) {
      throw new KeyExchangeException(KeyExchangeException.Reason.CLOSED, "key schedule closed");
    }
  }

  @Override
  public synchronized String toString() {
    return "KeySchedule[" + role + (closed ? ", closed]" : ", epoch " + current.epoch() + "]");
  }

  /** Collects the inputs of a {@link KeySchedule}; {@link #establish()} validates them. */
  public static final class Builder {
    private Role role;
    private X25519KeyPair localKey;
    private byte[] peerPublicKey;
    private TlsBinding binding;
    private byte[] sessionId;
    private Long initiatorQpn;
    private Long responderQpn;
    private Duration graceWindow = DEFAULT_GRACE_WINDOW;
    private LongSupplier nanoClock = System::nanoTime;

    private Builder() {}

    /** This party's role. */
    public Builder role(Role role) {
      this.role = role;
      return this;
    }

    /** This party's ephemeral key pair; {@link #establish()} closes it. */
    public Builder localKey(X25519KeyPair localKey) {
      this.localKey = localKey;
      return this;
    }

    /** The peer's ephemeral X25519 public key, as received (copied). */
    public Builder peerPublicKey(byte[] peerPublicKey) {
      this.peerPublicKey = peerPublicKey == null ? null : peerPublicKey.clone();
      return this;
    }

    /** The TLS binding of the connection; {@link #establish()} closes it. */
    public Builder binding(TlsBinding binding) {
      this.binding = binding;
      return this;
    }

    /** The session id both parties agreed on, 1 to 255 bytes (copied). */
    public Builder sessionId(byte[] sessionId) {
      this.sessionId = sessionId == null ? null : sessionId.clone();
      return this;
    }

    /** The initiator's QP number (unsigned 32 bits). */
    public Builder initiatorQpn(int qpn) {
      this.initiatorQpn = Integer.toUnsignedLong(qpn);
      return this;
    }

    /** The responder's QP number (unsigned 32 bits). */
    public Builder responderQpn(int qpn) {
      this.responderQpn = Integer.toUnsignedLong(qpn);
      return this;
    }

    /** How long the previous epoch's keys keep opening records after a rekey. */
    public Builder graceWindow(Duration graceWindow) {
      this.graceWindow = graceWindow;
      return this;
    }

    /** The monotonic clock for the grace window, in nanoseconds (default {@code nanoTime}). */
    public Builder nanoClock(LongSupplier nanoClock) {
      this.nanoClock = nanoClock;
      return this;
    }

    /**
     * Runs X25519 and derives epoch 0. The local key pair and the binding are closed whether or not
     * this succeeds.
     *
     * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_ARGUMENT} for a missing
     *     or malformed input, {@link KeyExchangeException.Reason#BAD_PUBLIC_KEY} for a bad peer key
     */
    public KeySchedule establish() {
      byte[] shared = null;
      byte[] prk = null;
      byte[] context = null;
      try {
        require(role, "role");
        require(localKey, "localKey");
        require(peerPublicKey, "peerPublicKey");
        require(binding, "binding");
        require(sessionId, "sessionId");
        require(initiatorQpn, "initiatorQpn");
        require(responderQpn, "responderQpn");
        require(graceWindow, "graceWindow");
        require(nanoClock, "nanoClock");
        if (sessionId.length == 0 || sessionId.length > MAX_SESSION_ID_LENGTH) {
          throw bad("session id must be 1 to " + MAX_SESSION_ID_LENGTH + " bytes");
        }
        if (graceWindow.isNegative()) {
          throw bad("grace window must not be negative");
        }
        byte[] localPublic = localKey.publicKey();
        shared = localKey.agree(peerPublicKey);
        byte[] initiatorPublic = role == Role.INITIATOR ? localPublic : peerPublicKey;
        byte[] responderPublic = role == Role.INITIATOR ? peerPublicKey : localPublic;
        ByteArrayOutputStream c = new ByteArrayOutputStream();
        c.writeBytes(CONTEXT_PREFIX.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        c.write(binding.kind().code());
        c.write(sessionId.length);
        c.writeBytes(sessionId);
        c.writeBytes(Bytes.u32(initiatorQpn));
        c.writeBytes(Bytes.u32(responderQpn));
        c.writeBytes(initiatorPublic);
        c.writeBytes(responderPublic);
        context = c.toByteArray();
        prk = Hkdf.extract(binding.value(), shared);
        byte[] secret0 = Hkdf.expand(prk, Bytes.info(SESSION_LABEL, context), Hkdf.HASH_LENGTH);
        return new KeySchedule(role, secret0, graceWindow, nanoClock);
      } finally {
        Bytes.wipe(shared);
        Bytes.wipe(prk);
        if (localKey != null) {
          localKey.close();
        }
        if (binding != null) {
          binding.close();
        }
      }
    }

    private static void require(Object value, String name) {
      if (value == null) {
        throw bad(name + " is required");
      }
    }

    private static KeyExchangeException bad(String why) {
      return new KeyExchangeException(KeyExchangeException.Reason.BAD_ARGUMENT, why);
    }
  }
}
