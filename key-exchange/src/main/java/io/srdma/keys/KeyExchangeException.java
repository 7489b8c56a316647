package io.srdma.keys;

import java.util.Objects;

/**
 * The one unchecked exception of the key-exchange module. {@link #reason()} says exactly what went
 * wrong, {@link Reason#category()} groups reasons for handling and metrics.
 *
 * <p>Messages never contain key material, passphrases or other secrets; they may contain file
 * names, certificate serial numbers and peer identities.
 */
public class KeyExchangeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Groups of {@link Reason}s. */
  public enum Category {
    /** The peer's certificate was refused. */
    PEER_CERTIFICATE,
    /** The TLS handshake failed for a reason other than the peer's certificate. */
    TLS,
    /** Session key agreement, confirmation or rekey failed. */
    KEY_SCHEDULE,
    /** The deployment CA or a credential file could not be used. */
    STORAGE,
    /** A name, argument or file content given by the caller is not acceptable. */
    INPUT,
    /** A key object was used after it was closed. */
    STATE,
    /** The cryptographic provider failed unexpectedly (a bug or a broken installation). */
    INTERNAL
  }

  /** What went wrong. */
  public enum Reason {
    /** The peer presented no certificate although one is required. */
    NO_CERTIFICATE(Category.PEER_CERTIFICATE),
    /** The certificate was not issued by this deployment's CA. */
    UNTRUSTED_ISSUER(Category.PEER_CERTIFICATE),
    /** The certificate's validity period has ended. */
    CERTIFICATE_EXPIRED(Category.PEER_CERTIFICATE),
    /** The certificate's validity period has not started yet. */
    CERTIFICATE_NOT_YET_VALID(Category.PEER_CERTIFICATE),
    /** The certificate is on the deployment CA's revocation list. */
    CERTIFICATE_REVOKED(Category.PEER_CERTIFICATE),
    /** The revocation list is missing, not signed by the CA, or out of date: fail closed. */
    REVOCATION_STATUS_UNKNOWN(Category.PEER_CERTIFICATE),
    /** Key usage, extended key usage or basic constraints do not allow this use. */
    WRONG_USAGE(Category.PEER_CERTIFICATE),
    /** The certificate carries no {@code srdma://tenant/peer} identity, or more than one. */
    NO_IDENTITY(Category.PEER_CERTIFICATE),
    /** The certificate is malformed or failed validation for another reason. */
    CERTIFICATE_INVALID(Category.PEER_CERTIFICATE),
    /** The certificate is valid but names another identity than the one this side expects. */
    UNEXPECTED_PEER(Category.PEER_CERTIFICATE),
    /**
     * A revocation list was refused because it would go backwards: its CRL number is lower than the
     * one in force, or equal with different content. The list in force stays.
     */
    CRL_ROLLBACK(Category.PEER_CERTIFICATE),
    /**
     * The deployment CA's own certificate (the trust anchor) has expired: no peer can be
     * authenticated, whatever its own certificate's dates ({@link TrustAnchorValidity}).
     */
    CA_EXPIRED(Category.PEER_CERTIFICATE),
    /**
     * The deployment CA's own certificate (the trust anchor) is not valid yet, usually a clock set
     * wrong: no peer can be authenticated ({@link TrustAnchorValidity}).
     */
    CA_NOT_YET_VALID(Category.PEER_CERTIFICATE),

    /** The peer offered no protocol version we accept (we accept TLS 1.3 only). */
    PROTOCOL_VERSION(Category.TLS),
    /** The handshake did not finish within its deadline. */
    HANDSHAKE_TIMEOUT(Category.TLS),
    /**
     * The peer sent more bytes before its handshake finished than any handshake of this deployment
     * needs (a certificate too large, too deeply nested, or too many of them): refused before the
     * bytes were parsed (docs/keys.md).
     */
    HANDSHAKE_TOO_LARGE(Category.TLS),
    /** The handshake failed for another reason (alert, closed connection, I/O error). */
    HANDSHAKE_FAILED(Category.TLS),
    /**
     * The peer resumed an earlier TLS session instead of proving its certificate again; only full
     * handshakes are accepted (docs/keys.md).
     */
    RESUMPTION_REFUSED(Category.TLS),

    /** The peer's X25519 public key is malformed or of low order. */
    BAD_PUBLIC_KEY(Category.KEY_SCHEDULE),
    /** The peer's key confirmation value does not match ours: the session must be aborted. */
    KEY_CONFIRMATION_FAILED(Category.KEY_SCHEDULE),
    /** A record names an epoch that is neither current, previous (within grace) nor next. */
    EPOCH_REJECTED(Category.KEY_SCHEDULE),
    /** No more epochs can be derived in this session. */
    EPOCH_EXHAUSTED(Category.KEY_SCHEDULE),

    /** The deployment CA directory does not exist or is incomplete. */
    CA_NOT_FOUND(Category.STORAGE),
    /** A CA already exists in the target directory. */
    CA_EXISTS(Category.STORAGE),
    /** An output file already exists; nothing is overwritten. */
    FILE_EXISTS(Category.STORAGE),
    /** Reading or writing a file failed. */
    IO_ERROR(Category.STORAGE),
    /**
     * A file (a private key, a PEM file, a file of the CA directory) was replaced between its check
     * and its open: by another file, by a link where links are not followed, or by a FIFO whose
     * open blocked. Someone who can write its directory is at work; it was refused unused
     * (docs/keys.md, "Hostile files").
     */
    FILE_REPLACED(Category.STORAGE),
    /** A passphrase-protected key could not be decrypted (wrong or missing passphrase). */
    BAD_PASSPHRASE(Category.STORAGE),
    /**
     * A private key file allows group or others access (its mode is more than {@code 600}); it is
     * refused without being read ({@link OwnerOnlyFiles}).
     */
    KEY_FILE_EXPOSED(Category.STORAGE),
    /**
     * A private key file is owned by a user other than this process's and root, who could replace
     * it; it is refused without being read ({@link OwnerOnlyFiles#strictModes}).
     */
    KEY_FILE_NOT_OWNED(Category.STORAGE),
    /**
     * A private key file lies in a directory that group or others may write (and that is not
     * sticky), or that another user owns: they could replace the key; it is refused without being
     * read ({@link OwnerOnlyFiles#strictModes}).
     */
    KEY_DIRECTORY_EXPOSED(Category.STORAGE),

    /** A tenant, peer or host name is not in the allowed character set or too long. */
    BAD_NAME(Category.INPUT),
    /** A PEM file holds no object of the expected type or cannot be parsed. */
    BAD_PEM(Category.INPUT),
    /** A serial number is malformed or unknown to this CA. */
    UNKNOWN_SERIAL(Category.INPUT),
    /** An argument is out of range (validity, length, QP number...). */
    BAD_ARGUMENT(Category.INPUT),
    /**
     * A certificate was asked for that would end after the CA that issues it: peers would refuse it
     * from the CA's end on ({@link TrustAnchorValidity}), so it is not issued ({@link
     * DeploymentCa#issuePeer(PeerIdentity, java.time.Duration)}).
     */
    OUTLIVES_CA(Category.INPUT),

    /** A key object was used after {@code close()}. */
    CLOSED(Category.STATE),

    /** The cryptographic provider failed unexpectedly. */
    CRYPTO_FAILURE(Category.INTERNAL);

    private final Category category;

    Reason(Category category) {
      this.category = category;
    }

    /** The group this reason belongs to. */
    public Category category() {
      return category;
    }
  }

  private final Reason reason;

  /**
   * Creates an exception.
   *
   * @param reason what went wrong
   * @param message a human-readable detail that contains no secret
   */
  public KeyExchangeException(Reason reason, String message) {
    super(reason + ": " + message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /**
   * Creates an exception with a cause.
   *
   * @param reason what went wrong
   * @param message a human-readable detail that contains no secret
   * @param cause the underlying failure
   */
  public KeyExchangeException(Reason reason, String message, Throwable cause) {
    super(reason + ": " + message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** What went wrong. */
  public Reason reason() {
    return reason;
  }

  /** The group of {@link #reason()}. */
  public Category category() {
    return reason.category();
  }
}
