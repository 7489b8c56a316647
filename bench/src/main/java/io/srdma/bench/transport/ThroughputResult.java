package io.srdma.bench.transport;

/**
 * What one run moved.
 *
 * @param messageSize bytes per message
 * @param messagesSent counted messages the sender started (the end message is not counted)
 * @param messagesDelivered counted messages the receiver delivered (see {@link BenchTransport})
 * @param deliveredNanos from the sender's start to the receiver delivering the last message
 * @param writesCompleted counted messages whose write completed on the sender side: the socket
 *     write returned (tls-jdk), the write future completed (tls-netty), the work completion arrived
 *     (plain-write)
 * @param writeCompletionNanos from the sender's start to the last of those completions
 * @param sequenceErrors messages that arrived with another sequence number than the next expected
 * @param senderChecksum CRC32C over every counted message as sent (0 unless verifying)
 * @param receiverChecksum CRC32C over every counted message as delivered (0 unless verifying)
 */
public record ThroughputResult(
    int messageSize,
    long messagesSent,
    long messagesDelivered,
    long deliveredNanos,
    long writesCompleted,
    long writeCompletionNanos,
    long sequenceErrors,
    long senderChecksum,
    long receiverChecksum) {

  /** Bytes delivered. */
  public long bytesDelivered() {
    return messagesDelivered * messageSize;
  }

  /** Delivered megabytes (10^6 bytes) per second. */
  public double deliveredMbPerSecond() {
    return rate(bytesDelivered(), deliveredNanos) / 1e6;
  }

  /** Delivered messages per second. */
  public double deliveredMessagesPerSecond() {
    return rate(messagesDelivered, deliveredNanos);
  }

  /** Sender-side write-completion megabytes (10^6 bytes) per second. */
  public double writeCompletionMbPerSecond() {
    return rate(writesCompleted * messageSize, writeCompletionNanos) / 1e6;
  }

  /** Whether every message sent was delivered, in order, with the same bytes. */
  public boolean intact() {
    return messagesDelivered == messagesSent
        && sequenceErrors == 0
        && senderChecksum == receiverChecksum;
  }

  private static double rate(long amount, long nanos) {
    return nanos <= 0 ? 0 : amount * 1e9 / nanos;
  }
}
