package io.srdma.cluster;

/**
 * Root of every exception this module throws. Unchecked; the {@link Reason} tells a caller what
 * went wrong without parsing the message.
 */
public final class ClusterException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why a cluster operation failed. */
  public enum Reason {
    /** The {@code cluster:} section (or a file it names) is wrong; nothing was started. */
    BAD_CONFIG,
    /** etcd did not answer within the request timeout (unreachable, no quorum). */
    UNAVAILABLE,
    /** A compare-and-swap lost: someone else wrote first. Nothing was written. */
    CONFLICT,
    /** What was to be written was refused (an invalid policy, a CRL that goes backwards). */
    REFUSED,
    /**
     * etcd refused the request for this client's user (the CN of its certificate) under etcd RBAC:
     * e.g. a host writing another host's keys, the policy or the CRL (docs/cluster.md, "Access
     * control").
     */
    DENIED,
    /** What etcd holds under the deployment's prefix is malformed. */
    MALFORMED,
    /** The caller was interrupted while waiting for etcd. */
    INTERRUPTED
  }

  private final Reason reason;

  /**
   * An exception.
   *
   * @param reason the category
   * @param message what happened, for people
   */
  public ClusterException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  /**
   * An exception with a cause.
   *
   * @param reason the category
   * @param message what happened, for people
   * @param cause what failed underneath
   */
  public ClusterException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** The category. */
  public Reason reason() {
    return reason;
  }
}
