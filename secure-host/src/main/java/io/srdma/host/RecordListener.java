package io.srdma.host;

/**
 * Told of each record a tenant peer wrote and the host opened.
 *
 * <p>Threading contract:
 *
 * <ul>
 *   <li>It is called on one of the host's opener threads ({@code srdma-host-<n>-opener-<i>}, see
 *       {@link HostOptions#openerThreads}): the thread that polled the record's completion and
 *       opened it.
 *   <li>All records of one session are delivered by the same opener thread, one call at a time, in
 *       the order their write notifications completed. Records of different sessions may be
 *       delivered at the same time on different opener threads, also to the same region's listener:
 *       a listener shared by sessions must be thread-safe.
 *   <li>Nothing in it should block or take long: while it runs, the opener thread opens nothing
 *       else, so a listener that blocks stalls every session assigned to that opener (their receive
 *       queues fill and their writers' notifications wait). Hand work that may block to your own
 *       threads, with a copy of the payload. A {@link RegionHost#revoke} or {@link
 *       RegionHost#reloadPolicy} that ends the grant of the record being delivered waits for the
 *       call to return (at most {@code requestTimeout}), so that no record of an ended grant is
 *       delivered after they return; a listener may revoke the grant of its own record without
 *       waiting for itself.
 *   <li>An exception it throws is logged and the record counts as delivered.
 * </ul>
 *
 * <p>Thread safety: see the contract above; a listener shared by sessions must be thread-safe.
 * Buffers: the {@link ReceivedRecord} and its payload are the host's, valid during the call only.
 */
@FunctionalInterface
public interface RecordListener {
  /**
   * A record was opened. The record and its payload buffer are reused by the opener thread after
   * the call returns: copy what you keep.
   *
   * @param record who wrote what where
   */
  void onRecord(ReceivedRecord record);
}
