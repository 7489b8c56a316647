package io.srdma.console;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The console's view of a clustered deployment (docs/cluster.md): this host's link to etcd, the
 * fleet's hosts and live grants, and revoking a grant on any host. A single host has none ({@link
 * ConsoleBackend#cluster()} is null) and its console is unchanged. Called from worker threads; the
 * fleet methods read etcd and may block up to its request timeout.
 */
public interface ClusterView {
  /**
   * Why a host refuses a pushed policy, as /metrics labels it: not signed, signed for another
   * deployment, not signed by the deployment CA, an older serial (rollback), or signed but not put
   * in force (invalid).
   */
  List<String> POLICY_REFUSAL_REASONS =
      List.of("unsigned", "foreign_deployment", "other_ca", "rollback", "invalid");

  /**
   * A pushed policy a host refused.
   *
   * @param reason one of {@link #POLICY_REFUSAL_REASONS}
   * @param serial the serial it carried (0: none)
   * @param at when it was refused
   */
  record PolicyRefusal(String reason, long serial, Instant at) {}

  /**
   * This host's link to etcd.
   *
   * @param host this host's name in the cluster
   * @param prefix the deployment's etcd prefix
   * @param connected false while degraded (etcd unreachable: serving on the last state applied)
   * @param since when the current state began
   * @param lastError why etcd is unreachable, or null
   * @param degradedEpisodes how often the host went degraded since it started
   */
  record Link(
      String host,
      String prefix,
      boolean connected,
      Instant since,
      String lastError,
      long degradedEpisodes) {}

  /**
   * One host of the fleet, as it last reported.
   *
   * @param host its name
   * @param policySha256 the policy it runs
   * @param policyRevision the etcd revision of that policy (0: its local file)
   * @param applied when it applied it
   * @param degraded whether it reported from degraded mode
   * @param sessions its live sessions as it last published them, or -1 if it never did
   * @param policyRefusals how many pushed policies it refused since it started
   * @param lastPolicyRefusal the last of them, or null
   */
  record FleetHost(
      String host,
      String policySha256,
      long policyRevision,
      Instant applied,
      boolean degraded,
      int sessions,
      long policyRefusals,
      PolicyRefusal lastPolicyRefusal) {
    /** A host that reported no refusal. */
    public FleetHost(
        String host,
        String policySha256,
        long policyRevision,
        Instant applied,
        boolean degraded,
        int sessions) {
      this(host, policySha256, policyRevision, applied, degraded, sessions, 0, null);
    }
  }

  /**
   * One live grant of the fleet.
   *
   * @param host the host that issued it
   * @param grantId its id on that host
   * @param tenant the tenant
   * @param peer the holder
   * @param region the region
   * @param offset first granted byte
   * @param length granted bytes
   * @param ops granted operations
   * @param expiresAt its expiry
   */
  record FleetGrant(
      String host,
      long grantId,
      String tenant,
      String peer,
      String region,
      long offset,
      long length,
      String ops,
      Instant expiresAt) {}

  /** This host's link; local, never blocks. */
  Link link();

  /**
   * Pushed policies this host refused since it started, by reason ({@link
   * #POLICY_REFUSAL_REASONS}); local, never blocks.
   */
  default Map<String, Long> policyRefusals() {
    return Map.of();
  }

  /**
   * Watches this host found open but silent since it started (each watched again and re-read);
   * local, never blocks.
   */
  default long silentWatches() {
    return 0;
  }

  /** The deployment's pushed policy hash, or null if none was pushed. */
  String deploymentPolicySha256();

  /** Every host that reported, by name. */
  List<FleetHost> hosts();

  /** Every live grant of the fleet, by host and id. */
  List<FleetGrant> grants();

  /**
   * Revokes a grant on any host: this host's own by deleting its etcd key; another host's by a
   * revoke request that host acts on (under etcd RBAC a host may write only its own keys). Its host
   * revokes it.
   *
   * @return false if no such grant is listed
   */
  boolean revoke(String host, long grantId);
}
