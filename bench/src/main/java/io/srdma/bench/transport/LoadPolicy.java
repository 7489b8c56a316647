package io.srdma.bench.transport;

/** The policy of a {@link LoadRun}, generated for its tenants and grants. */
final class LoadPolicy {
  private LoadPolicy() {}

  /** One tenant per {@code config.tenants()}, each with a 1 MiB region and a writer role. */
  static String text(LoadConfig config) {
    StringBuilder y = new StringBuilder("version: 1\ntenants:\n");
    for (int t = 0; t < config.tenants(); t++) {
      y.append("  ")
          .append(LoadRun.tenant(t))
          .append(":\n")
          .append("    regions:\n")
          .append("      data:\n")
          .append("        size: ")
          .append(LoadRun.REGION_BYTES)
          .append('\n')
          .append("    roles:\n")
          .append("      writer:\n")
          .append("        permissions: [\"region:write:data\"]\n")
          .append("        operations: [write]\n")
          .append("        max-bytes-per-grant: ")
          .append(LoadRun.REGION_BYTES)
          .append('\n')
          .append("        max-ttl: 3h\n")
          .append("        max-live-grants: ")
          .append(config.grantsPerSession() + 4)
          .append('\n')
          .append("    peers:\n")
          .append("      - identity: srdma://")
          .append(LoadRun.tenant(t))
          .append("/p-*\n")
          .append("        roles: [writer]\n");
    }
    return y.toString();
  }
}
