package io.srdma.cluster;

/** Something a cluster node keeps in step with etcd, re-read after any failure. */
interface Follower extends AutoCloseable {
  /** Whether a {@link #resync()} is due. */
  boolean broken();

  /** Asks for a {@link #resync()} at the next chance. */
  void markBroken();

  /**
   * Reads what it follows afresh and watches again.
   *
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer (it stays broken)
   */
  void resync();

  /**
   * What it read but could not put in force yet (it is retried), saying why; null when nothing
   * waits. A node with such a follower is not following the deployment: it reports DEGRADED.
   */
  default String unapplied() {
    return null;
  }

  @Override
  void close();
}
