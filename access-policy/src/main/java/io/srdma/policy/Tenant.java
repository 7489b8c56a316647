package io.srdma.policy;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
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
  // patterns as flat arrays: a miss costs two string checks, not four object hops
  private final String[] patternPrefixes;
  private final String[] patternSuffixes;
  private final PeerEntry[] patternEntries;
  private final Map<String, RegionAccess> access = new HashMap<>();

  /** A region with, per role and operation, the first role permission implying access. */
  static final class RegionAccess {
    final Region region;
    final IdentityHashMap<Role, Map<Operation, RolePermission>> byRole = new IdentityHashMap<>();

    RegionAccess(Region region) {
      this.region = region;
    }

    /** The permission of {@code role} implying {@code op} here, or null. */
    RolePermission permitting(Role role, Operation op) {
      Map<Operation, RolePermission> byOp = byRole.get(role);
      return byOp == null ? null : byOp.get(op);
    }
  }

  Tenant(String name, List<Region> regions, List<Role> roles, List<PeerEntry> peers) {
    this.name = name;
    Map<String, Region> rg = new LinkedHashMap<>();
    regions.forEach(r -> rg.put(r.name(), r));
    this.regions = java.util.Collections.unmodifiableMap(rg);
    Map<String, Role> rl = new LinkedHashMap<>();
    roles.forEach(r -> rl.put(r.name(), r));
    this.roles = java.util.Collections.unmodifiableMap(rl);
    this.peers = List.copyOf(peers);
    List<PeerEntry> patterns = new ArrayList<>();
    for (PeerEntry p : peers) {
      if (p.pattern().isWildcard()) {
        patterns.add(p);
      } else {
        exactPeers.put(p.pattern().text(), p);
      }
    }
    patternEntries = patterns.toArray(PeerEntry[]::new);
    patternPrefixes = patterns.stream().map(p -> p.pattern().prefix()).toArray(String[]::new);
    patternSuffixes = patterns.stream().map(p -> p.pattern().suffix()).toArray(String[]::new);
    // Regions and operations are finite and declared, so Shiro's answer for every (region,
    // role, operation) is computed once here; decide() only looks it up.
    for (Region r : regions) {
      RegionAccess ra = new RegionAccess(r);
      for (Role role : roles) {
        Map<Operation, RolePermission> byOp = new EnumMap<>(Operation.class);
        for (Operation op : Operation.values()) {
          Permission needed = TenantScope.requested(name, op, r.name());
          for (RolePermission rp : role.permissions()) {
            if (rp.scoped().implies(needed)) {
              byOp.put(op, rp);
              break;
            }
          }
        }
        ra.byRole.put(role, byOp);
      }
      access.put(r.name(), ra);
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
    for (int i = 0; i < patternEntries.length; i++) {
      String pre = patternPrefixes[i];
      String suf = patternSuffixes[i];
      if (identity.length() >= pre.length() + suf.length()
          && identity.startsWith(pre)
          && identity.endsWith(suf)) {
        return patternEntries[i];
      }
    }
    return null;
  }

  /**
   * A declared region with the answers Shiro gave at load for each of this tenant's roles.
   *
   * @param region the region name
   * @return the access table, or null if the tenant declares no such region
   */
  RegionAccess access(String region) {
    return access.get(region);
  }
}
