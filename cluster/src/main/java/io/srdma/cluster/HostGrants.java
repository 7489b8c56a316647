package io.srdma.cluster;

import java.util.List;

/**
 * What a cluster node needs of its host's grants: the live ones, and revoking one. {@code srdma
 * serve} adapts {@code RegionHost#grants()} and {@code RegionHost#revoke}; tests use a map.
 */
public interface HostGrants {
  /** The grants live on this host now. Called from the node's apply thread every 200 ms. */
  List<ClusterGrant> live();

  /**
   * Revokes a grant now (its window invalidated, the holder told, audited).
   *
   * @param grantId the host's grant id
   * @param actor who revoked it, for the audit line
   * @return false if no such grant is live (already ended or expired)
   */
  boolean revoke(long grantId, String actor);
}
