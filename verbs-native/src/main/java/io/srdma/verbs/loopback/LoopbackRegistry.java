package io.srdma.verbs.loopback;

import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-process "fabric": maps the random 64-bit id a queue pair's {@link ConnectionInfo} carries
 * to the queue pair. Address form: {@code "LOOP" | id u64}. Ids are random, so a guessed or stale
 * id finds nothing. Thread-safe.
 */
final class LoopbackRegistry {
  private static final int MAGIC = 0x4C4F4F50; // "LOOP"
  static final int ADDRESS_LENGTH = 12;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final ConcurrentHashMap<Long, LoopbackQueuePair> QPS = new ConcurrentHashMap<>();

  private LoopbackRegistry() {}

  /** Registers {@code qp} under a fresh random id and returns the id. */
  static long register(LoopbackQueuePair qp) {
    while (true) {
      long id = RANDOM.nextLong();
      if (id != 0 && QPS.putIfAbsent(id, qp) == null) {
        return id;
      }
    }
  }

  static void unregister(long id, LoopbackQueuePair qp) {
    QPS.remove(id, qp);
  }

  static byte[] address(long id) {
    return ByteBuffer.allocate(ADDRESS_LENGTH).putInt(MAGIC).putLong(id).array();
  }

  /**
   * The queue pair {@code info} names.
   *
   * @throws VerbsException INVALID_ARGUMENT when the address is not a loopback address or no queue
   *     pair of this process has it
   */
  static LoopbackQueuePair resolve(ConnectionInfo info, String verb) {
    byte[] a = info.address();
    ByteBuffer b = ByteBuffer.wrap(a);
    if (a.length != ADDRESS_LENGTH || b.getInt() != MAGIC) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "not a loopback provider address ("
              + a.length
              + " bytes); loopback connects only to loopback queue pairs");
    }
    long id = b.getLong();
    LoopbackQueuePair qp = QPS.get(id);
    if (qp == null || qp.qpn() != info.qpn()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "no loopback queue pair with id "
              + Long.toHexString(id)
              + " and qpn 0x"
              + Integer.toHexString(info.qpn())
              + " in this process (loopback connects queue pairs of one JVM only; closed?)");
    }
    return qp;
  }
}
