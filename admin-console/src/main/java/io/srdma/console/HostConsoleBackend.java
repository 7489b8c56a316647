package io.srdma.console;

import io.srdma.channel.Access;
import io.srdma.host.HostStats;
import io.srdma.host.HostedRegion;
import io.srdma.host.RegionHost;
import io.srdma.policy.Operation;
import io.srdma.policy.Policy;
import io.srdma.policy.Region;
import io.srdma.policy.ReloadResult;
import io.srdma.policy.Tenant;
import io.srdma.verbs.doctor.DeviceCounter;
import io.srdma.verbs.doctor.DeviceCounters;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * The console's view of a running {@link RegionHost}: what {@code srdma serve} and demo use.
 *
 * <p>Thread-safe.
 */
public final class HostConsoleBackend implements ConsoleBackend {
  private final RegionHost host;
  private final Path auditLog;
  private final DeviceCounters deviceCounters;
  private volatile String policyText;

  /**
   * A backend without device counters (a host on the soft provider).
   *
   * @param host the running host
   * @param policyText the text of the policy the host started with
   * @param auditLog the host's audit log file
   */
  public HostConsoleBackend(RegionHost host, String policyText, Path auditLog) {
    this(host, policyText, auditLog, null);
  }

  /**
   * @param host the running host
   * @param policyText the text of the policy the host started with
   * @param auditLog the host's audit log file
   * @param deviceCounters reads the host's RDMA device's counters at each scrape, or null for none
   */
  public HostConsoleBackend(
      RegionHost host, String policyText, Path auditLog, DeviceCounters deviceCounters) {
    this.host = host;
    this.policyText = policyText;
    this.auditLog = auditLog;
    this.deviceCounters = deviceCounters;
  }

  @Override
  public List<SessionInfo> sessions() {
    List<SessionInfo> out = new ArrayList<>();
    for (io.srdma.host.SessionInfo s : host.sessions()) {
      out.add(
          new SessionInfo(
              s.sessionId(),
              s.identity(),
              s.tenant(),
              s.since(),
              s.epoch(),
              s.bytesIn(),
              0,
              s.recordsIn()));
    }
    return out;
  }

  @Override
  public List<RegionInfo> regions() {
    Policy p = host.policy();
    List<RegionInfo> out = new ArrayList<>();
    for (HostedRegion r : host.regions()) {
      Tenant t = p.tenants().get(r.tenant());
      Region declared = t == null ? null : t.regions().get(r.name());
      out.add(
          new RegionInfo(
              r.tenant(),
              r.name(),
              declared == null ? r.size() : declared.size(),
              r.size(),
              r.liveGrants()));
    }
    return out;
  }

  @Override
  public List<GrantInfo> grants() {
    List<GrantInfo> out = new ArrayList<>();
    for (io.srdma.host.GrantInfo g : host.grants()) {
      out.add(
          new GrantInfo(
              Long.toString(g.grantId()),
              g.identity(),
              g.tenant(),
              g.region(),
              g.offset(),
              g.length(),
              operations(g.access()),
              g.issuedAt(),
              g.expiresAt(),
              g.sessionId()));
    }
    return out;
  }

  private static Set<Operation> operations(Set<Access> access) {
    Set<Operation> ops = EnumSet.noneOf(Operation.class);
    for (Access a : access) {
      ops.add(a == Access.READ ? Operation.READ : Operation.WRITE);
    }
    return ops;
  }

  @Override
  public boolean revoke(String grantId, String actor) {
    long id;
    try {
      id = Long.parseLong(grantId);
    } catch (NumberFormatException e) {
      return false;
    }
    return host.revoke(id, actor);
  }

  @Override
  public ConsoleStats stats() {
    HostStats s = host.stats();
    return new ConsoleStats(
        s.bytesOpened(),
        s.recordsOpened(),
        s.recordsRejected(),
        s.grantsIssued() + s.denials() + s.recordsOpened() + s.recordsRejected(),
        s.sessions(),
        s.liveGrants(),
        s.denials(),
        s.remoteAccessErrors(),
        s.authFailures(),
        s.staleNotifications(),
        s.sessionsTerminated(),
        s.handshakeDeadlines(),
        s.responderRefusals(),
        s.rateLimited(),
        s.quotaRefusals(),
        s.receiveCreditWrites(),
        s.receiveCreditsDeferred());
  }

  @Override
  public List<DeviceCounter> deviceCounters() {
    return deviceCounters == null ? List.of() : deviceCounters.read();
  }

  @Override
  public Policy policy() {
    return host.policy();
  }

  @Override
  public String policyText() {
    return policyText;
  }

  @Override
  public synchronized ReloadResult reload(Policy next, String text, String actor) {
    try {
      ReloadResult r = host.reloadPolicy(next, actor);
      policyText = text;
      return r;
    } catch (RuntimeException e) {
      if (host.policy() == next) {
        policyText = text; // in force although its audit failed: show what is in force
      }
      throw e;
    }
  }

  private volatile ClusterView cluster;

  /** Joins the console to the host's cluster (before the console starts). */
  public void cluster(ClusterView view) {
    this.cluster = view;
  }

  @Override
  public ClusterView cluster() {
    return cluster;
  }

  /**
   * Takes the text of a policy that was put in force without the console, e.g. by {@code srdma
   * serve}'s watch of the policy file, so that the console shows (and diffs against) what is in
   * force. The text is taken only if it is the text of the host's policy now (same SHA-256 of its
   * UTF-8 bytes); otherwise another reload came in between and the text in hand is stale.
   *
   * @param text the policy file's text, as read after the reload
   * @return whether it was taken
   */
  public synchronized boolean policyReloaded(String text) {
    if (!sha256(text).equals(host.policy().sha256())) {
      return false;
    }
    policyText = text;
    return true;
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  @Override
  public Path auditLog() {
    return auditLog;
  }
}
