package io.srdma.policy;

import java.util.List;

/** Writes small policy files for property tests: two tenants with the same region names. */
final class PolicyYaml {
  static final List<String> REGIONS = List.of("kv", "feat");

  private PolicyYaml() {}

  /**
   * Tenant {@code acme} with one role {@code r} holding {@code permissions}, granted to {@code
   * srdma://acme/*}; tenant {@code globex} with a read-only role on {@code feat} granted to {@code
   * srdma://globex/*}.
   */
  static String twoTenants(List<String> permissions, String maxTtl) {
    StringBuilder b = new StringBuilder("version: 1\ntenants:\n");
    tenant(b, "acme", permissions, maxTtl);
    tenant(b, "globex", List.of("region:read:feat"), "1m");
    return b.toString();
  }

  private static void tenant(StringBuilder b, String name, List<String> perms, String maxTtl) {
    b.append("  ").append(name).append(":\n    regions:\n");
    for (String r : REGIONS) {
      b.append("      ").append(r).append(": {size: 1MiB}\n");
    }
    b.append("    roles:\n      r:\n        permissions:\n");
    for (String p : perms) {
      b.append("          - \"").append(p).append("\"\n");
    }
    b.append("        operations: [read, write]\n")
        .append("        max-bytes-per-grant: 1MiB\n")
        .append("        max-ttl: ")
        .append(maxTtl)
        .append('\n')
        .append("        max-live-grants: 4\n")
        .append("    peers:\n      - identity: srdma://")
        .append(name)
        .append("/*\n        roles: [r]\n");
  }
}
