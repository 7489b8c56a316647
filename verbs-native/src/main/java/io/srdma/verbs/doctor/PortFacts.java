package io.srdma.verbs.doctor;

import java.util.List;

/**
 * What sysfs says about one port of an RDMA device.
 *
 * @param number the port number (from 1)
 * @param linkLayer {@code "Ethernet"} (RoCE, iWARP) or {@code "InfiniBand"}, empty if unknown
 * @param state the logical state word ({@code "ACTIVE"}, {@code "DOWN"}, {@code "INIT"}, ...)
 * @param physState the physical state word ({@code "LinkUp"}, {@code "Disabled"}, ...)
 * @param netdev the network interface behind the port, empty if none was found
 * @param netdevMtu that interface's MTU, or -1 when unknown
 * @param gids the populated GID entries, by index
 */
public record PortFacts(
    int number,
    String linkLayer,
    String state,
    String physState,
    String netdev,
    int netdevMtu,
    List<GidEntry> gids) {
  /** Creates the facts; the GID list is copied. */
  public PortFacts {
    gids = List.copyOf(gids);
  }

  /** Whether the port is ACTIVE. */
  public boolean active() {
    return "ACTIVE".equalsIgnoreCase(state);
  }

  /** Whether the port runs over Ethernet (RoCE or iWARP). */
  public boolean ethernet() {
    return "Ethernet".equalsIgnoreCase(linkLayer);
  }

  /** The RoCE v2 entries. */
  public List<GidEntry> roceV2Gids() {
    return gids.stream().filter(GidEntry::roceV2).toList();
  }
}
