package io.srdma.host;

import java.util.Locale;

/**
 * Why the host ended a live session on its own: each is audited with its {@link #token()} (on the
 * session's end and on every grant it revoked), so an auditor can tell them apart.
 */
enum SessionEnd {
  /** The peer's certificate is on the deployment CA's revocation list now. */
  CERTIFICATE_REVOKED,
  /** The peer's certificate passed its notAfter. */
  CERTIFICATE_EXPIRED,
  /** The peer's certificate is refused for another reason (e.g. the CRL is no longer usable). */
  CERTIFICATE_REFUSED,
  /** The session is older than {@link HostOptions#maxSessionLifetime}. */
  SESSION_LIFETIME,
  /**
   * The session's rejected records and notifications passed {@link HostOptions#maxRejectedRecords}.
   */
  REJECTED_RECORDS;

  private final String token = name().toLowerCase(Locale.ROOT).replace('_', '-');

  /** The audit reason, e.g. {@code certificate-revoked}. */
  String token() {
    return token;
  }
}
