package io.srdma.bench.transport;

import java.util.Optional;
import org.HdrHistogram.Histogram;

/**
 * One way of moving messages from a sender to a receiver in this JVM, over loopback, for {@code
 * srdma bench}. Both endpoints belong to the transport; the bench drives it through this life
 * cycle:
 *
 * <pre>
 *   unavailableReason()            empty, or why it cannot run here (printed, never skipped silently)
 *   for each message size:
 *     prepare(size)                connect (first time), allocate/register buffers for this size
 *     throughput(warm-up spec)     result ignored
 *     throughput(measured spec)    counted
 *     latency(spec, histogram)     one message at a time
 *   close()
 * </pre>
 *
 * <p>Rules every transport follows, so that the columns compare like with like:
 *
 * <ul>
 *   <li>Each message carries its sequence number, big-endian, in its first 8 bytes ({@link
 *       Payload#stamp}); the rest is the fixed pattern of {@link Payload#fill}. After the last
 *       counted message the sender sends one more whose stamp is {@link Payload#END} (not counted),
 *       so the receiver knows the run is over.
 *   <li>A message is <b>delivered</b> when the receiver has all of it in its own memory, in
 *       plaintext (decrypted and authenticated for TLS, opened for sealed records), and has checked
 *       its sequence number. Throughput counts delivered messages only.
 *   <li>With {@link RunSpec#verify()} both sides fold every counted message into a CRC32C ({@link
 *       Payload#checksum}); tests compare the two.
 *   <li>Latency is one-way: from just before the sender starts sending a message to the moment the
 *       receiver has delivered it, both read from {@link System#nanoTime()} of this one JVM. The
 *       receiver then acknowledges the message (one small message back); the sender waits for the
 *       acknowledgement before sending the next, which only paces the run and is not in the figure.
 *   <li>Every wait has a deadline; a transport that stalls throws instead of hanging.
 * </ul>
 *
 * <p>To add a transport, implement this and add one line to {@link Transports#REGISTRY}.
 */
public interface BenchTransport extends AutoCloseable {

  /** The name used in {@code --transports}, tables and JSON, e.g. {@code tls-jdk}. */
  String name();

  /**
   * Why this transport cannot run on this machine (for example BoringSSL missing), or empty when it
   * can. Called before {@link #prepare}; the bench prints the reason and skips only this one.
   */
  default Optional<String> unavailableReason() {
    return Optional.empty();
  }

  /**
   * What this transport's connection negotiated, as protocol and cipher suite (for example {@code
   * TLSv1.3 TLS_AES_128_GCM_SHA256}), once {@link #prepare} connected it; empty before that and for
   * transports that negotiate nothing. The bench prints it, so a comparison says which cipher each
   * side ran.
   */
  default Optional<String> negotiated() {
    return Optional.empty();
  }

  /**
   * Gets ready to move messages of {@code messageSize} bytes: connects both endpoints on the first
   * call, (re)allocates and registers buffers. Called once per size, sizes in any order.
   *
   * @param messageSize at least {@link Payload#MIN_SIZE} bytes
   */
  void prepare(int messageSize) throws Exception;

  /**
   * Streams messages from the sender to the receiver until {@code spec} says stop, then sends the
   * end message and waits until the receiver has delivered everything sent.
   *
   * @return what was delivered and when; see {@link ThroughputResult}
   */
  ThroughputResult throughput(RunSpec spec) throws Exception;

  /**
   * Sends one message at a time until {@code spec} says stop, recording each message's one-way
   * latency (sender start to receiver delivered, nanoseconds) into {@code oneWayNanos}.
   *
   * @return the latency run's delivery counts (its rates are not meaningful, its checksums are)
   */
  ThroughputResult latency(RunSpec spec, Histogram oneWayNanos) throws Exception;

  /** Closes both endpoints and frees everything; idempotent. Failures are unchecked. */
  @Override
  void close();
}
