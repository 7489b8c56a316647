package io.srdma.verbs.doctor;

/**
 * One populated entry of a port's GID table ({@code ports/<n>/gids/<i>} with its {@code
 * gid_attrs}).
 *
 * @param index the GID index (what {@code -Dsrdma.ibv.gidIndex} takes)
 * @param gid the GID as sysfs writes it ({@code 0000:0000:0000:0000:0000:ffff:7f00:0001})
 * @param type {@code "RoCE v2"}, {@code "IB/RoCE v1"}, or empty where the kernel has no type
 * @param netdev the network interface the entry belongs to, or empty
 */
public record GidEntry(int index, String gid, String type, String netdev) {
  /** Whether this is a RoCE v2 (UDP/IP) entry, the kind the {@code ibv} provider addresses. */
  public boolean roceV2() {
    return "RoCE v2".equalsIgnoreCase(type);
  }
}
