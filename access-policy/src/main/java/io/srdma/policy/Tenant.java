package io.srdma.policy;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.shiro.authz.Permission;

/** A tenant: its regions, roles and peers, with lookups precomputed for decisions. */
public final class Tenant {
  private final String name;
  private final Map<String, Region> regions;
  private final Map<String, Role> roles;
  private final List<PeerEntry> peers;
  private final Map<String, PeerEntry> exactPeers = new HashMap<>();
  private final List<PeerEntry> patternPeers = new ArrayList<>();
  private final Map<String, Map<Operation, Permission>> requested = new HashMap<>();

  Tenant(String name, List<Region> regions, List<Role> roles, List<PeerEntry> peers) {
    this.name = name;
    Map<String, Region> rg = new LinkedHashMap<>();
    regions.forEach(r -> rg.put(r.name(), r));
    this.regions = java.util.Collections.unmodifiableMap(rg);
    Map<String, Role> rl = new LinkedHashMap<>();
    roles.forEach(r -> rl.put(r.name(), r));
    this.roles = java.util.Collections.unmodifiableMap(rl);
    this.peers = List.copyOf(peers);
    for (PeerEntry p : peers) {
      if (p.pattern().isWildcard()) {
        patternPeers.add(p);
      } else {
        exactPeers.put(p.pattern().text(), p);
      }
    }
    for (Region r : regions) {
      Map<Operation, Permission> byOp = new EnumMap<>(Operation.class);
      for (Operation op : Operation.values()) {
        byOp.put(op, TenantScope.requested(name, op, r.name()));
      }
      requested.put(r.name(), byOp);
    }
  }

  /** The tenant name. */
  public String name() {
    return name;
  }

  /** Regions by name, in file order. */
  public Map<String, Region> regions() {
    return regions;
  }

  /** Roles by name, in file order. */
  public Map<String, Role> roles() {
    return roles;
  }

  /** Peer entries in file order. */
  public List<PeerEntry> peers() {
    return peers;
  }

  /**
   * The entry that applies to an identity: an exact entry first, else the one pattern that matches
   * (validation guarantees at most one).
   *
   * @param identity a peer identity
   * @return the entry, or null if none applies
   */
  public PeerEntry peerFor(String identity) {
    PeerEntry exact = exactPeers.get(identity);
    if (exact != null) {
      return exact;
    }
    for (int i = 0, n = patternPeers.size(); i < n; i++) {
      PeerEntry p = patternPeers.get(i);
      if (p.pattern().matches(identity)) {
        return p;
      }
    }
    return null;
  }

  /** The precomputed permission a request for {@code op} on {@code region} needs. */
  Permission requested(String region, Operation op) {
    return requested.get(region).get(op);
  }
}
