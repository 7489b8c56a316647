package io.srdma.host;

import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.ProtectionDomain;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a host's sessions share and change: the tenants' protection domains, the registered regions,
 * the live grants, the sessions and their quotas. Thread-safe (concurrent maps, atomic counts).
 */
final class HostTables {
  private final DeviceContext device;
  private final int maxSessions;
  private final int maxSessionsPerTenant;
  private final HostCounters counters;
  final Map<String, TenantDomain> domains = new ConcurrentHashMap<>();
  final Map<String, HostedRegion> regions = new ConcurrentHashMap<>();
  final Map<Long, HostGrant> grants = new ConcurrentHashMap<>();

  /** Every session from accept to its end, with the thread that reads its control frames. */
  final Map<HostSession, HostSession> sessions = new ConcurrentHashMap<>();

  private final Map<String, AtomicInteger> sessionsPerTenant = new ConcurrentHashMap<>();
  private final AtomicInteger sessionCount = new AtomicInteger();
  private volatile boolean closed;

  HostTables(DeviceContext device, HostOptions options, HostCounters counters) {
    this.device = device;
    this.maxSessions = options.maxSessions();
    this.maxSessionsPerTenant = options.maxSessionsPerTenant();
    this.counters = counters;
  }

  /** No session is reserved from now on (the host is closing). */
  void close() {
    closed = true;
  }

  /** Takes one session of the host's and the tenant's quota; false when either is spent. */
  boolean reserveSession(String tenant) {
    if (closed) {
      return false;
    }
    if (sessionCount.incrementAndGet() > maxSessions) {
      sessionCount.decrementAndGet();
      return false;
    }
    AtomicInteger c = sessionsPerTenant.computeIfAbsent(tenant, k -> new AtomicInteger());
    if (c.incrementAndGet() > maxSessionsPerTenant) {
      c.decrementAndGet();
      sessionCount.decrementAndGet();
      return false;
    }
    return true;
  }

  void releaseSession(String tenant) {
    sessionsPerTenant.get(tenant).decrementAndGet();
    sessionCount.decrementAndGet();
  }

  void sessionEnded(HostSession s) {
    sessions.remove(s);
  }

  /** The tenant's protection domain, allocated at first use. */
  TenantDomain domain(String tenant) {
    return domains.computeIfAbsent(
        tenant, t -> new TenantDomain(t, device.allocateProtectionDomain()));
  }

  HostedRegion hostedRegion(String tenant, String region) {
    return regions.get(tenant + "/" + region);
  }

  void grantIssued(HostGrant g) {
    grants.put(g.id, g);
    counters.grantsIssued.increment();
  }

  void grantEnded(HostGrant g) {
    if (grants.remove(g.id) != null) {
      counters.revocations.increment();
    }
  }

  /** One protection domain per tenant. */
  static final class TenantDomain {
    final String tenant;
    final ProtectionDomain pd;

    TenantDomain(String tenant, ProtectionDomain pd) {
      this.tenant = tenant;
      this.pd = pd;
    }
  }
}
