package io.srdma.channel;

/** Told of each record a tenant peer wrote and the host opened (on the host's receiver thread). */
@FunctionalInterface
public interface RecordListener {
  /**
   * A record was opened. The payload buffer is valid only during the call: copy what you keep.
   *
   * @param record who wrote what where
   */
  void onRecord(ReceivedRecord record);
}
