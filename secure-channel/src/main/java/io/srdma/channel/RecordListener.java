package io.srdma.channel;

/**
 * Told of each record a tenant peer wrote and the host opened (on the host's receiver thread).
 *
 * <p>Thread safety: called on the host's one receiver thread, one record at a time; a listener that
 * blocks delays every region's records, so hand long work to another thread. Buffers: the {@link
 * ReceivedRecord} and its payload are the host's, valid during the call only.
 */
@FunctionalInterface
public interface RecordListener {
  /**
   * A record was opened. The payload buffer is valid only during the call: copy what you keep.
   *
   * @param record who wrote what where
   */
  void onRecord(ReceivedRecord record);
}
