package io.srdma.policy;

import org.apache.shiro.authz.Permission;
import org.apache.shiro.authz.permission.WildcardPermission;

/**
 * Builds tenant-scoped Shiro permissions. Tenant names hold no {@code : , *}, so the tenant is
 * always one literal first part: {@code acme:*} implies nothing of {@code globex}. Shiro does all
 * matching.
 */
final class TenantScope {
  private TenantScope() {}

  /** The permission a role of {@code tenant} holds when the file says {@code written}. */
  static Permission scoped(String tenant, String written) {
    return new WildcardPermission(tenant + ":" + written, true);
  }

  /** The permission a request for {@code op} on {@code region} of {@code tenant} needs. */
  static Permission requested(String tenant, Operation op, String region) {
    return new WildcardPermission(tenant + ":region:" + op.token() + ":" + region, true);
  }
}
