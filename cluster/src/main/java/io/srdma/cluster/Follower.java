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

  @Override
  void close();
}
