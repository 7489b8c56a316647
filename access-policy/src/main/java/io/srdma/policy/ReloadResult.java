package io.srdma.policy;

import java.util.List;

/**
 * What a reload changed: the policies before and after, and the live grants the new policy no
 * longer allows. The authority keeps counting those until the channel revokes and releases them.
 *
 * @param previous the policy that was in force
 * @param current the policy now in force
 * @param forbidden live grants the new policy forbids, in issue order
 */
public record ReloadResult(Policy previous, Policy current, List<ForbiddenGrant> forbidden) {

  /** Copies the list so the result is immutable. */
  public ReloadResult {
    forbidden = List.copyOf(forbidden);
  }

  /**
   * A live grant the new policy forbids.
   *
   * @param grant the grant
   * @param reason why the new policy refuses it
   * @param detail what decided, for people
   */
  public record ForbiddenGrant(LiveGrant grant, DecisionReason reason, String detail) {}
}
