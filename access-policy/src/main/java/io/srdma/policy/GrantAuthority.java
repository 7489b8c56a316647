package io.srdma.policy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Decides grant requests against the policy in force and counts live grants per peer.
 *
 * <p>Deny by default: a request is allowed only when the identity belongs to the tenant, a peer
 * entry of that tenant matches it, the range lies inside a declared region, and one of the peer's
 * roles holds permissions implying every requested operation and its scope admits the operations,
 * the length and one more live grant. Roles are tried in file order; the first that admits the
 * request decides, and its max TTL clips the requested TTL. Which permission implies which (region,
 * operation) is Shiro's {@code WildcardPermission.implies}, asked once per pair when the policy is
 * built (see {@link Tenant}).
 *
 * <p>Thread-safe. {@link #decide} is lock-free and reads the policy once, so a decision sees the
 * old or the new policy, never a mix. {@link #issue}, {@link #release} and {@link #reload} are
 * serialized, so no grant slips past a reload's review.
 */
public final class GrantAuthority {
  private final Clock clock;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile Policy policy;
  // guarded by lock; counts mirror byPeer for lock-free reads in decide()
  private final Map<String, LiveGrant> byId = new HashMap<>();
  private final Map<String, LinkedHashMap<String, LiveGrant>> byPeer = new LinkedHashMap<>();
  private final ConcurrentHashMap<String, Integer> counts = new ConcurrentHashMap<>();
  // guarded by lock: live grants a reload found forbidden, until released (see forbidden(String))
  private final Map<String, ReloadResult.ForbiddenGrant> forbidden = new HashMap<>();

  /**
   * An authority using the system clock.
   *
   * @param initial the policy in force at start
   */
  public GrantAuthority(Policy initial) {
    this(initial, Clock.systemUTC());
  }

  /**
   * An authority.
   *
   * @param initial the policy in force at start
   * @param clock the clock for issue times and expiry
   */
  public GrantAuthority(Policy initial, Clock clock) {
    this.policy = java.util.Objects.requireNonNull(initial, "initial");
    this.clock = java.util.Objects.requireNonNull(clock, "clock");
  }

  /** The policy in force. */
  public Policy policy() {
    return policy;
  }

  /**
   * Decides a request without recording anything. Quotas are judged against the live grants
   * recorded so far.
   *
   * @param identity the peer identity from its certificate, e.g. {@code srdma://acme/trainer-1}
   * @param tenant the tenant whose region is asked for
   * @param region the region name
   * @param operations the operations wanted, not empty
   * @param offset first byte, not negative
   * @param length bytes wanted, positive
   * @param ttl lifetime wanted, positive; clipped to the role's max
   * @return the decision
   */
  public Decision decide(
      String identity,
      String tenant,
      String region,
      Set<Operation> operations,
      long offset,
      long length,
      Duration ttl) {
    int live = identity == null ? 0 : counts.getOrDefault(identity, 0);
    return evaluate(policy, identity, tenant, region, operations, offset, length, ttl, live);
  }

  /**
   * Decides a request and, if allowed, records it as a live grant in the same step, so that
   * concurrent requests cannot exceed a quota. Expired grants of the peer are dropped first.
   *
   * @param grantId the channel's id for the grant, not already live
   * @param identity see {@link #decide}
   * @param tenant see {@link #decide}
   * @param region see {@link #decide}
   * @param operations see {@link #decide}
   * @param offset see {@link #decide}
   * @param length see {@link #decide}
   * @param ttl see {@link #decide}
   * @return the decision; when allowed the grant is live with the effective TTL
   * @throws PolicyException category ILLEGAL_ARGUMENT if the id is already live
   */
  public Decision issue(
      String grantId,
      String identity,
      String tenant,
      String region,
      Set<Operation> operations,
      long offset,
      long length,
      Duration ttl) {
    java.util.Objects.requireNonNull(grantId, "grantId");
    lock.lock();
    try {
      if (byId.containsKey(grantId)) {
        throw new PolicyException(
            PolicyException.Category.ILLEGAL_ARGUMENT, "grant id already live: " + grantId);
      }
      Instant now = clock.instant();
      if (identity != null) {
        pruneExpired(identity, now);
      }
      int live = identity == null ? 0 : counts.getOrDefault(identity, 0);
      Decision d =
          evaluate(policy, identity, tenant, region, operations, offset, length, ttl, live);
      if (d.allowed()) {
        LiveGrant g =
            new LiveGrant(
                grantId,
                identity,
                tenant,
                region,
                operations,
                offset,
                length,
                d.effectiveTtl(),
                now,
                d.role());
        byId.put(grantId, g);
        byPeer.computeIfAbsent(identity, k -> new LinkedHashMap<>()).put(grantId, g);
        counts.merge(identity, 1, Integer::sum);
      }
      return d;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records that a grant ended (revoked, expired, session closed).
   *
   * @param grantId the grant id
   * @return the grant, or empty if it was not live
   */
  public Optional<LiveGrant> release(String grantId) {
    lock.lock();
    try {
      LiveGrant g = byId.remove(grantId);
      forbidden.remove(grantId);
      if (g != null) {
        Map<String, LiveGrant> peer = byPeer.get(g.identity());
        peer.remove(grantId);
        if (peer.isEmpty()) {
          byPeer.remove(g.identity());
        }
        counts.computeIfPresent(g.identity(), (k, n) -> n <= 1 ? null : n - 1);
      }
      return Optional.ofNullable(g);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Why a reload found live grant {@code grantId} forbidden, if it did and the grant has not been
   * {@link #release released} since. A caller that scopes a grant after {@link #issue} and only
   * then makes it findable for revocation (as the host does) asks this once it is findable: a
   * reload that ran in between reported the grant but could not revoke it, so the caller must.
   *
   * @param grantId the grant id
   * @return the reload's finding when the policy in force forbids the grant, else empty
   */
  public Optional<ReloadResult.ForbiddenGrant> forbidden(String grantId) {
    lock.lock();
    try {
      return Optional.ofNullable(forbidden.get(grantId));
    } finally {
      lock.unlock();
    }
  }

  /** A snapshot of the live grants, in issue order per peer. */
  public List<LiveGrant> liveGrants() {
    lock.lock();
    try {
      List<LiveGrant> out = new ArrayList<>();
      byPeer.values().forEach(m -> out.addAll(m.values()));
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * How many live grants a peer holds.
   *
   * @param identity the peer identity
   * @return the count
   */
  public int liveGrantCount(String identity) {
    return counts.getOrDefault(identity, 0);
  }

  /**
   * Installs a new policy atomically and reviews every live grant against it: a grant the new
   * policy would not issue (including over a narrowed quota, judged in issue order, or with a
   * lifetime over the new max TTL) is reported as forbidden, and {@link #forbidden(String)} says so
   * until it is released. The caller revokes those and then {@link #release releases} them.
   *
   * @param next the validated policy to put in force
   * @return the previous and new policy and the forbidden grants
   */
  public ReloadResult reload(Policy next) {
    java.util.Objects.requireNonNull(next, "next");
    lock.lock();
    try {
      Policy previous = policy;
      policy = next;
      List<ReloadResult.ForbiddenGrant> found = new ArrayList<>();
      for (Map<String, LiveGrant> grants : byPeer.values()) {
        int kept = 0;
        for (LiveGrant g : grants.values()) {
          Decision d =
              evaluate(
                  next,
                  g.identity(),
                  g.tenant(),
                  g.region(),
                  g.operations(),
                  g.offset(),
                  g.length(),
                  g.ttl(),
                  kept);
          if (!d.allowed()) {
            found.add(new ReloadResult.ForbiddenGrant(g, d.reason(), d.detail()));
          } else if (d.effectiveTtl().compareTo(g.ttl()) < 0) {
            found.add(
                new ReloadResult.ForbiddenGrant(
                    g,
                    DecisionReason.TTL_EXCEEDS_MAX,
                    "ttl "
                        + g.ttl()
                        + " over the max "
                        + d.effectiveTtl()
                        + " of role "
                        + d.role()));
          } else {
            kept++;
          }
        }
      }
      found.sort(
          Comparator.comparing((ReloadResult.ForbiddenGrant f) -> f.grant().issuedAt())
              .thenComparing(f -> f.grant().id()));
      found.forEach(f -> forbidden.put(f.grant().id(), f));
      return new ReloadResult(previous, next, found);
    } finally {
      lock.unlock();
    }
  }

  private void pruneExpired(String identity, Instant now) {
    Map<String, LiveGrant> grants = byPeer.get(identity);
    if (grants == null) {
      return;
    }
    for (Iterator<LiveGrant> it = grants.values().iterator(); it.hasNext(); ) {
      LiveGrant g = it.next();
      if (!g.expiresAt().isAfter(now)) {
        it.remove();
        byId.remove(g.id());
        forbidden.remove(g.id());
        counts.computeIfPresent(identity, (k, n) -> n <= 1 ? null : n - 1);
      }
    }
    if (grants.isEmpty()) {
      byPeer.remove(identity);
    }
  }

  /** The decision procedure; pure given its arguments. */
  static Decision evaluate(
      Policy p,
      String identity,
      String tenant,
      String region,
      Set<Operation> ops,
      long offset,
      long length,
      Duration ttl,
      int live) {
    Set<Operation> opSet = ops == null ? Set.of() : ops;
    if (identity == null || tenant == null || region == null || ttl == null) {
      return deny(
          p,
          DecisionReason.INVALID_REQUEST,
          "missing argument",
          identity,
          tenant,
          region,
          opSet,
          offset,
          length);
    }
    if (opSet.isEmpty() || offset < 0 || length <= 0 || ttl.isNegative() || ttl.isZero()) {
      return deny(
          p,
          DecisionReason.INVALID_REQUEST,
          "needs at least one operation, offset >= 0, length > 0 and ttl > 0",
          identity,
          tenant,
          region,
          opSet,
          offset,
          length);
    }
    Tenant t = p.tenant(tenant);
    if (t == null) {
      return deny(
          p,
          DecisionReason.UNKNOWN_TENANT,
          "no tenant '" + tenant + "'",
          identity,
          tenant,
          region,
          opSet,
          offset,
          length);
    }
    if (!PeerIdentity.belongsTo(identity, tenant)) {
      return deny(
          p,
          DecisionReason.TENANT_MISMATCH,
          "identity " + identity + " is not of tenant '" + tenant + "'",
          identity,
          tenant,
          region,
          opSet,
          offset,
          length);
    }
    PeerEntry peer = t.peerFor(identity);
    if (peer == null) {
      return deny(
          p,
          DecisionReason.UNKNOWN_PEER,
          "no peer entry matches " + identity,
          identity,
          tenant,
          region,
          opSet,
          offset,
          length);
    }
    Tenant.RegionAccess ra = t.access(region);
    if (ra == null) {
      return deny(
          p,
          DecisionReason.UNKNOWN_REGION,
          "tenant '" + tenant + "' has no region '" + region + "'",
          identity,
          tenant,
          region,
          opSet,
          offset,
          length);
    }
    Region r = ra.region;
    if (offset > r.size() || length > r.size() - offset) {
      return deny(
          p,
          DecisionReason.OUT_OF_BOUNDS,
          "["
              + offset
              + ", +"
              + length
              + ") is outside region "
              + region
              + " of "
              + r.size()
              + " bytes",
          identity,
          tenant,
          region,
          opSet,
          offset,
          length);
    }
    int bestStage = -1;
    Decision best = null;
    for (Role role : peer.roles()) {
      String permission = permittedBy(ra, role, opSet);
      if (permission == null) {
        continue;
      }
      int stage;
      DecisionReason reason;
      String detail;
      if (!role.operations().containsAll(opSet)) {
        stage = 0;
        reason = DecisionReason.OPERATION_NOT_ALLOWED;
        detail = "role allows only " + role.operations();
      } else if (length > role.maxBytesPerGrant()) {
        stage = 1;
        reason = DecisionReason.TOO_LARGE;
        detail = length + " bytes over the role's max of " + role.maxBytesPerGrant();
      } else if (live >= role.maxLiveGrants()) {
        stage = 2;
        reason = DecisionReason.QUOTA_EXCEEDED;
        detail = "peer holds " + live + " live grants, the role's max is " + role.maxLiveGrants();
      } else {
        Duration effective = ttl.compareTo(role.maxTtl()) > 0 ? role.maxTtl() : ttl;
        return new Decision(
            DecisionReason.ALLOWED,
            "allowed",
            identity,
            tenant,
            region,
            opSet,
            offset,
            length,
            effective,
            role.name(),
            permission,
            role.maxLiveGrants(),
            p.sha256());
      }
      if (stage > bestStage) {
        bestStage = stage;
        best =
            new Decision(
                reason,
                detail,
                identity,
                tenant,
                region,
                opSet,
                offset,
                length,
                null,
                role.name(),
                permission,
                role.maxLiveGrants(),
                p.sha256());
      }
    }
    if (best != null) {
      return best;
    }
    return deny(
        p,
        DecisionReason.NOT_PERMITTED,
        "no role of the peer holds a permission for every operation on this region",
        identity,
        tenant,
        region,
        opSet,
        offset,
        length);
  }

  // Written permissions of the role that imply each requested operation, or null if one is
  // missing. Shiro's WildcardPermission.implies decided each pair when the policy was loaded.
  private static String permittedBy(Tenant.RegionAccess ra, Role role, Set<Operation> ops) {
    String found = null;
    for (Operation op : ops) {
      RolePermission rp = ra.permitting(role, op);
      if (rp == null) {
        return null;
      }
      String by = rp.written();
      found = found == null || found.equals(by) ? by : found + ", " + by;
    }
    return found;
  }

  private static Decision deny(
      Policy p,
      DecisionReason reason,
      String detail,
      String identity,
      String tenant,
      String region,
      Set<Operation> ops,
      long offset,
      long length) {
    return new Decision(
        reason,
        detail,
        identity,
        tenant,
        region,
        ops,
        offset,
        length,
        null,
        null,
        null,
        0,
        p.sha256());
  }
}
