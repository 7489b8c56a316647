package io.srdma.policy;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The outcome of a grant request: allowed with its effective scope, or denied with a reason.
 * Immutable.
 *
 * @param reason {@link DecisionReason#ALLOWED} or why it was denied
 * @param detail what decided, for people and audit lines
 * @param identity the requesting peer identity
 * @param tenant the tenant asked for
 * @param region the region asked for
 * @param operations the operations asked for
 * @param offset first byte of the range
 * @param length bytes in the range
 * @param effectiveTtl the lifetime to grant, the request clipped to the role's max; null if denied
 * @param role the role that allowed (or, when a role permitted but its scope refused, that role);
 *     null otherwise
 * @param permission the permission, as written, that implied the request; null if none did
 * @param maxLiveGrants the role's live-grant limit; 0 if no role permitted
 * @param policySha256 the policy that decided
 */
public record Decision(
    DecisionReason reason,
    String detail,
    String identity,
    String tenant,
    String region,
    Set<Operation> operations,
    long offset,
    long length,
    Duration effectiveTtl,
    String role,
    String permission,
    int maxLiveGrants,
    String policySha256) {

  /** Copies the set so the decision is immutable. */
  public Decision {
    operations =
        operations.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(operations));
  }

  /** Whether the request is allowed. */
  public boolean allowed() {
    return reason == DecisionReason.ALLOWED;
  }

  /** One line saying what was decided and why. */
  public String explain() {
    StringBuilder b = new StringBuilder(allowed() ? "ALLOW" : "DENY " + reason);
    b.append(": ").append(detail);
    if (role != null) {
      b.append(" [role ").append(tenant).append('/').append(role);
      if (permission != null) {
        b.append(", permission ").append(permission);
      }
      b.append(']');
    }
    if (effectiveTtl != null) {
      b.append(" ttl ").append(effectiveTtl);
    }
    return b.toString();
  }
}
