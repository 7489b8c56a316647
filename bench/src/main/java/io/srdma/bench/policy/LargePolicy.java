package io.srdma.bench.policy;

import java.nio.charset.StandardCharsets;

/**
 * Generates the benchmark policy: {@code tenants} tenants, each with 4 regions, {@code roles} roles
 * (mixed exact and wildcard permissions) and one peer entry per role (half patterns).
 */
final class LargePolicy {
  static final int TENANTS = 1_000;
  static final int ROLES = 10;

  private LargePolicy() {}

  static byte[] yaml(int tenants, int roles) {
    StringBuilder b = new StringBuilder(tenants * 2600).append("version: 1\ntenants:\n");
    for (int t = 0; t < tenants; t++) {
      b.append("  t").append(t).append(":\n    regions:\n");
      for (String r : new String[] {"kvcache", "params", "features", "scratch"}) {
        b.append("      ").append(r).append(": {size: 1GiB}\n");
      }
      b.append("    roles:\n");
      for (int r = 0; r < roles; r++) {
        String perm =
            switch (r % 4) {
              case 0 -> "region:read,write:kvcache";
              case 1 -> "region:read:*";
              case 2 -> "region:write:params,scratch";
              default -> "region:*:features";
            };
        b.append("      role")
            .append(r)
            .append(":\n")
            .append("        permissions: [\"region:read:scratch\", \"")
            .append(perm)
            .append("\"]\n")
            .append("        operations: [read, write]\n")
            .append("        max-bytes-per-grant: 64MiB\n")
            .append("        max-ttl: 10m\n")
            .append("        max-live-grants: 1000000\n");
      }
      b.append("    peers:\n");
      for (int r = 0; r < roles; r++) {
        b.append("      - identity: srdma://t").append(t).append("/peer").append(r);
        b.append(r % 2 == 0 ? "-*" : "").append('\n');
        b.append("        roles: [role").append(r).append("]\n");
      }
    }
    return b.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** An identity matching role {@code r}'s peer entry of tenant {@code t}. */
  static String identity(int t, int r) {
    return "srdma://t" + t + "/peer" + r + (r % 2 == 0 ? "-node7" : "");
  }
}
