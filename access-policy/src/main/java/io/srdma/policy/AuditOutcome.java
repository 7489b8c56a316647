package io.srdma.policy;

import java.util.Locale;

/** How an audited action turned out. */
public enum AuditOutcome {
  /** The action succeeded (authentication, reload, revoke). */
  SUCCESS,
  /** The action failed (bad password, rejected policy file). */
  FAILURE,
  /** A request was allowed. */
  ALLOWED,
  /** A request was denied. */
  DENIED;

  /** The name written in the log. */
  public String token() {
    return name().toLowerCase(Locale.ROOT);
  }
}
