package io.srdma.policy;

import org.apache.shiro.authz.Permission;

/**
 * One permission of a role: as written in the policy file, and as the tenant-scoped Shiro
 * permission that decides. The scoped form always starts with the role's tenant as a literal first
 * part, so it can imply nothing outside that tenant whatever wildcards the written form uses.
 *
 * @param written the permission as written, e.g. {@code region:write:kvcache}
 * @param scoped the Shiro permission {@code <tenant>:<written>}
 */
public record RolePermission(String written, Permission scoped) {}
