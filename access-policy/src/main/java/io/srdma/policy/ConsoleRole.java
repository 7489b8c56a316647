package io.srdma.policy;

import java.util.Locale;
import java.util.Optional;

/** A role of an admin-console user. */
public enum ConsoleRole {
  /** May change things: revoke grants, reload policy. */
  ADMIN,
  /** May read everything, change nothing. */
  AUDITOR;

  /** The name used in policy files: {@code admin}, {@code auditor}. */
  public String token() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses a policy-file token, empty if it names no role. */
  static Optional<ConsoleRole> fromToken(String token) {
    for (ConsoleRole r : values()) {
      if (r.token().equals(token)) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }
}
