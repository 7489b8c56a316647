package io.srdma.console;

import io.srdma.policy.Operation;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.Region;
import io.srdma.policy.ReloadResult;
import io.srdma.policy.Tenant;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/** An in-memory host: the sample policy, three sessions, four grants, counters tests advance. */
final class FakeBackend implements ConsoleBackend {
  final AtomicLong bytesMoved = new AtomicLong();
  final AtomicLong records = new AtomicLong();
  final AtomicLong operations = new AtomicLong();
  final AtomicLong denials = new AtomicLong(2);
  final AtomicLong remoteAccessErrors = new AtomicLong(1);
  final List<String> revokedBy = new CopyOnWriteArrayList<>();
  volatile PolicyException refuseReload;
  volatile io.srdma.verbs.doctor.DeviceCounters deviceCounters;
  volatile boolean deviceCountersFail;

  /** Runs before every read of the policy in force, outside the backend's lock (tests). */
  volatile Runnable onPolicyRead;

  /** Runs before every reload, outside the backend's lock (tests). */
  volatile Runnable beforeReload;

  /**
   * Runs before every read of the audit log's path, outside the backend's lock (tests): audit
   * pages, export and verify ask it first, so a hook that waits makes them slow.
   */
  volatile Runnable onAuditLogRead;

  /**
   * Runs before every read of the policy text, outside the backend's lock (tests): a validation
   * asks it first, so a hook that waits makes it slow.
   */
  volatile Runnable onPolicyTextRead;

  /**
   * Runs before every read of the live sessions, outside the backend's lock (tests): {@code GET
   * /api/sessions} and {@code /api/peers} ask it, login, logout and revoke do not, so a hook that
   * waits makes those light routes slow.
   */
  volatile Runnable onSessionsRead;

  /** Runs before every revoke with the grant id, outside the backend's lock (tests). */
  volatile java.util.function.Consumer<String> beforeRevoke;

  private final Path auditLog;
  private final Map<String, GrantInfo> grants = new LinkedHashMap<>();
  private final List<SessionInfo> sessions = new ArrayList<>();
  private Policy policy;
  private String text;

  private final io.srdma.policy.AuditTrail trail;

  FakeBackend(io.srdma.policy.AuditLog log) {
    this.auditLog = log.file();
    this.trail = new io.srdma.policy.AuditTrail(log);
    this.text = sampleText();
    this.policy = new PolicyLoader().parse("sample-policy.yaml", text);
    Instant t0 = Instant.parse("2026-11-29T21:00:00Z");
    sessions.add(
        new SessionInfo("s-1", "srdma://acme/trainer-1", "acme", t0, 3, 1 << 20, 4096, 300));
    sessions.add(
        new SessionInfo("s-2", "srdma://acme/checkpointer", "acme", t0, 1, 0, 1 << 24, 40));
    sessions.add(
        new SessionInfo("s-3", "srdma://globex/inference-7", "globex", t0, 0, 8192, 0, 12));
    Instant far = Instant.now().plus(Duration.ofHours(1));
    add(
        new GrantInfo(
            "g-1",
            "srdma://acme/trainer-1",
            "acme",
            "kvcache",
            0,
            4096,
            Set.of(Operation.READ, Operation.WRITE),
            t0,
            far,
            "s-1"));
    add(
        new GrantInfo(
            "g-2",
            "srdma://acme/trainer-1",
            "acme",
            "checkpoints",
            0,
            1 << 20,
            Set.of(Operation.READ),
            t0,
            far,
            "s-1"));
    add(
        new GrantInfo(
            "g-3",
            "srdma://acme/checkpointer",
            "acme",
            "checkpoints",
            1 << 20,
            1 << 24,
            Set.of(Operation.WRITE),
            t0,
            far,
            "s-2"));
    add(
        new GrantInfo(
            "g-4",
            "srdma://globex/inference-7",
            "globex",
            "kvcache",
            0,
            65536,
            Set.of(Operation.READ),
            t0,
            far,
            "s-3"));
  }

  static String sampleText() {
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void add(GrantInfo g) {
    grants.put(g.grantId(), g);
  }

  /** Moves the counters as a busy host would. */
  void advance(long bytes, long ops) {
    bytesMoved.addAndGet(bytes);
    records.addAndGet(ops);
    operations.addAndGet(ops);
  }

  @Override
  public List<SessionInfo> sessions() {
    Runnable hook = onSessionsRead;
    if (hook != null) {
      hook.run();
    }
    synchronized (this) {
      return List.copyOf(sessions);
    }
  }

  @Override
  public synchronized List<RegionInfo> regions() {
    List<RegionInfo> out = new ArrayList<>();
    for (Tenant t : policy.tenants().values()) {
      for (Region r : t.regions().values()) {
        int live =
            (int)
                grants.values().stream()
                    .filter(g -> g.tenant().equals(t.name()) && g.region().equals(r.name()))
                    .count();
        out.add(new RegionInfo(t.name(), r.name(), r.size(), live > 0 ? r.size() : 0, live));
      }
    }
    return out;
  }

  @Override
  public synchronized List<GrantInfo> grants() {
    return List.copyOf(grants.values());
  }

  /** Ends a grant as the host would on its own (expiry, session end): no console involved. */
  synchronized void end(String grantId) {
    grants.remove(grantId);
  }

  @Override
  public boolean revoke(String grantId, String actor) {
    java.util.function.Consumer<String> hook = beforeRevoke;
    if (hook != null) {
      hook.accept(grantId);
    }
    return revokeNow(grantId, actor);
  }

  private synchronized boolean revokeNow(String grantId, String actor) {
    GrantInfo g = grants.remove(grantId);
    if (g == null) {
      return false;
    }
    trail.revoked(
        new io.srdma.policy.LiveGrant(
            g.grantId(),
            g.identity(),
            g.tenant(),
            g.region(),
            g.operations(),
            g.offset(),
            g.length(),
            Duration.between(g.issuedAt(), g.expiresAt()),
            g.issuedAt(),
            null),
        actor,
        "revoked");
    revokedBy.add(grantId + " by " + actor);
    return true;
  }

  @Override
  public synchronized ConsoleStats stats() {
    return new ConsoleStats(
        bytesMoved.get(),
        records.get(),
        0,
        operations.get(),
        sessions.size(),
        grants.size(),
        denials.get(),
        remoteAccessErrors.get(),
        0);
  }

  @Override
  public List<io.srdma.verbs.doctor.DeviceCounter> deviceCounters() {
    if (deviceCountersFail) {
      throw new IllegalStateException("device counters fail (test)");
    }
    io.srdma.verbs.doctor.DeviceCounters d = deviceCounters;
    return d == null ? List.of() : d.read();
  }

  @Override
  public Policy policy() {
    Runnable hook = onPolicyRead;
    if (hook != null) {
      hook.run();
    }
    synchronized (this) {
      return policy;
    }
  }

  @Override
  public String policyText() {
    Runnable hook = onPolicyTextRead;
    if (hook != null) {
      hook.run();
    }
    synchronized (this) {
      return text;
    }
  }

  @Override
  public ReloadResult reload(Policy next, String nextText, String actor) {
    Runnable hook = beforeReload;
    if (hook != null) {
      hook.run();
    }
    return reloadNow(next, nextText, actor);
  }

  private synchronized ReloadResult reloadNow(Policy next, String nextText, String actor) {
    PolicyException refuse = refuseReload;
    if (refuse != null) {
      throw refuse;
    }
    Policy previous = policy;
    policy = next;
    text = nextText;
    ReloadResult r = new ReloadResult(previous, next, List.of());
    trail.reloaded(r, actor);
    return r;
  }

  @Override
  public Path auditLog() {
    Runnable hook = onAuditLogRead;
    if (hook != null) {
      hook.run();
    }
    return auditLog;
  }

  /** The cluster view a test gives this host (null: a single host). */
  volatile ClusterView cluster;

  @Override
  public ClusterView cluster() {
    return cluster;
  }
}
