package io.srdma.policy;

import java.util.List;

/**
 * A peer entry of a tenant: who (identity or pattern) gets which roles.
 *
 * @param pattern the identity or pattern
 * @param roles the roles, in file order; decisions try them in this order
 */
public record PeerEntry(PeerPattern pattern, List<Role> roles) {

  /** Copies the list so the entry is immutable. */
  public PeerEntry {
    roles = List.copyOf(roles);
  }
}
