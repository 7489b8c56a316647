package io.srdma.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A host's live grants as a map; revocations recorded with their actor. */
final class FakeGrants implements HostGrants {
  final String host;
  final Map<Long, ClusterGrant> live = new ConcurrentHashMap<>();
  final Map<Long, String> revoked = new ConcurrentHashMap<>();

  FakeGrants(String host) {
    this.host = host;
  }

  ClusterGrant issue(long id, Duration ttl) {
    ClusterGrant g =
        new ClusterGrant(
            host,
            id,
            "acme",
            "srdma://acme/trainer-" + id,
            "kvcache",
            4096L * id,
            4096,
            "read,write",
            Instant.now().plus(ttl));
    live.put(id, g);
    return g;
  }

  @Override
  public List<ClusterGrant> live() {
    Instant now = Instant.now();
    live.values().removeIf(g -> !g.expiresAt().isAfter(now));
    return List.copyOf(live.values());
  }

  @Override
  public boolean revoke(long grantId, String actor) {
    if (live.remove(grantId) == null) {
      return false;
    }
    revoked.put(grantId, actor);
    return true;
  }
}
