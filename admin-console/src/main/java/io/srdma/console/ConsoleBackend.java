package io.srdma.console;

import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.ReloadResult;
import io.srdma.verbs.doctor.DeviceCounter;
import java.nio.file.Path;
import java.util.List;

/**
 * What the console needs from the running host (the secure-channel server). The console never
 * reaches into the host otherwise, so it can be tested against a fake and run beside any host that
 * implements this.
 *
 * <p>Implementations must be thread-safe. The console calls every method from a worker thread
 * (never the event loop), so a method may block briefly, e.g. to force an audit line to disk.
 *
 * <p>Auditing: the console writes the audit lines of what only it sees (logins, policies that do
 * not parse, a revoke that did not happen). The host audits the state changes themselves, whoever
 * asked for them: {@link #revoke} writes the {@code revoke} line (actor = the console user) when it
 * revokes, and nothing when it returns false, and {@link #reload} the {@code reload} line, and then
 * the revocations a reload causes; a reload the host refuses it does not audit (the console does,
 * as {@code reload} failure).
 */
public interface ConsoleBackend {

  /** The live sessions, in any order. */
  List<SessionInfo> sessions();

  /** Every region of every tenant of the policy in force. */
  List<RegionInfo> regions();

  /** The live grants, in any order. */
  List<GrantInfo> grants();

  /**
   * Revokes a live grant now: invalidates its memory window, tells its holder, releases it.
   *
   * @param grantId the grant id
   * @param actor the console user revoking it (for the host's own records)
   * @return false if no live grant has that id (unknown, expired or already revoked)
   */
  boolean revoke(String grantId, String actor);

  /** The host's counters now. */
  ConsoleStats stats();

  /**
   * The RDMA device's port and hardware counters now, exported on {@code /metrics} beside {@link
   * #stats()}; called once per scrape, so it reads them then (no background thread). Unreadable
   * counters are left out; a runtime exception costs the scrape only these counters. The default
   * has none (a host on the soft provider, which has no sysfs device).
   */
  default List<DeviceCounter> deviceCounters() {
    return List.of();
  }

  /** The policy in force. */
  Policy policy();

  /**
   * The text of the policy in force, exactly as it was parsed ({@link Policy} keeps only its source
   * label and SHA-256). Its SHA-256 is {@code policy().sha256()}.
   */
  String policyText();

  /**
   * Installs a new policy atomically (see {@link io.srdma.policy.GrantAuthority#reload}) and deals
   * with the live grants it forbids.
   *
   * @param next the validated policy
   * @param text its text, kept for {@link #policyText()}
   * @param actor the console user reloading
   * @return what changed
   * @throws PolicyException if the host refuses it; the old policy stays in force
   */
  ReloadResult reload(Policy next, String text, String actor);

  /** The active file of the hash-chained audit log; rotated files sit beside it. */
  Path auditLog();

  /**
   * The clustered deployment this host belongs to (docs/cluster.md), or null for a single host (the
   * default): {@code /api/cluster} then says so and {@code /metrics} has no cluster series.
   */
  default ClusterView cluster() {
    return null;
  }
}
