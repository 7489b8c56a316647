package io.srdma.policy;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * A role of one tenant: Shiro wildcard permissions plus scope limits applied to every grant it
 * allows.
 *
 * @param tenant the tenant the role is declared under
 * @param name the role name, unique within the tenant
 * @param permissions the permissions, in file order
 * @param operations operations a grant under this role may carry
 * @param maxBytesPerGrant the largest length one grant may cover
 * @param maxTtl the longest lifetime of a grant; longer requests are clipped
 * @param maxLiveGrants how many live grants one peer may hold when this role allows the grant
 */
public record Role(
    String tenant,
    String name,
    List<RolePermission> permissions,
    Set<Operation> operations,
    long maxBytesPerGrant,
    Duration maxTtl,
    int maxLiveGrants) {

  /** Copies the collections so the role is immutable. */
  public Role {
    permissions = List.copyOf(permissions);
    operations = Set.copyOf(operations);
  }
}
