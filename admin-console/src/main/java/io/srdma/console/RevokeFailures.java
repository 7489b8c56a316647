package io.srdma.console;

import io.srdma.policy.AuditTrail;
import io.srdma.policy.LiveGrant;

/**
 * The {@code revoke}/{@code failure} line of a console revoke that did not happen (the grant ended
 * first, or the revocation was not confirmed): written by the single-host and the fleet revoke
 * alike, so that every revoke an operator asks for leaves a line.
 */
final class RevokeFailures {
  private RevokeFailures() {}

  /**
   * Writes the line (reason {@code console}, actor the console user); if it cannot be written,
   * {@code cause} (the error the request then fails with) says so.
   */
  static void audit(
      AuditTrail trail, LiveGrant grant, String user, String detail, RuntimeException cause) {
    try {
      trail.revokeFailed(grant, user, "console", detail);
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
    }
  }

  /** The detail of a revocation that threw: its outcome is not known. */
  static String notConfirmed(RuntimeException e) {
    return "not confirmed: "
        + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
  }
}
