package io.srdma.channel;

import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.record.AeadSelection;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device objects of one client on the process's shared device context: protection domain, a place
 * on one of the context's completion lanes (reserved before the queue pair is created on the lane's
 * queue), queue pair, staging, read and credit-word registrations; closed in reverse, the lane left
 * after the queue pair is destroyed, the shared context given back last. Used by the connecting and
 * the closing thread only.
 */
final class ClientResources {
  private static final Logger LOG = LoggerFactory.getLogger(ClientResources.class);

  SharedDeviceContext context;
  ProtectionDomain pd;
  CompletionLane lane;
  int laneNeed;
  QueuePair qp;
  private int registeredQpn = -1;
  private boolean joined;
  MemoryRegion staging;
  MemoryRegion read;
  MemoryRegion credits; // the word the host writes receive credits into (CreditWord)
  int sendSges = 1; // scatter/gather entries a write may have: records a run may carry
  private String runLimit; // why sendSges is below RUN_SGES; null: it is not

  /**
   * Most records of one run (one WRITE gathering their staging slots, SealedWriter): the protocol's
   * limit, past which the host rejects.
   */
  static final int RUN_SGES = Capabilities.RUN_RECORDS;

  /** Sessions of this process whose runs the device held below {@link #RUN_SGES} records. */
  private static final AtomicLong RUN_FALLBACKS = new AtomicLong();

  void open(ClientOptions o) {
    context = SharedDeviceContext.acquire(o.provider(), o.device());
    pd = context.context().allocateProtectionDomain();
    int slots = o.stagingSlots();
    int sendDepth = slots + 4;
    laneNeed = sendDepth + 8;
    lane = context.lanes().join(laneNeed, o.idleSpins());
    joined = true;
    CompletionQueue cq = lane.cq();
    int maxSge = context.context().queryDevice().maxSge();
    sendSges = Math.max(1, Math.min(RUN_SGES, maxSge));
    if (sendSges < RUN_SGES) {
      runLimit = "the device takes " + maxSge + " SGEs a request";
    }
    try {
      qp = pd.createQueuePair(new QueuePairAttributes(cq, cq, sendDepth, 1, sendSges, 1));
    } catch (VerbsException e) {
      if (sendSges == 1) {
        throw e;
      }
      // a device may cap a queue pair's SGEs below what it reports at this depth: records then
      // go one to a WRITE, as with a host that takes no runs (counted and said by runRecords)
      runLimit = "no queue pair with " + sendSges + " send SGEs (" + e.getMessage() + ")";
      sendSges = 1;
      qp = pd.createQueuePair(new QueuePairAttributes(cq, cq, sendDepth, 1, 1, 1));
    }
    // remote writes reach only the credit word: the one registration of this client's own
    // protection domain that allows them
    qp.init(AccessFlags.REMOTE_WRITE);
    int slotSize = o.maxRecordPayload() + SealedLayout.RECORD_OVERHEAD;
    staging = pd.registerMemory(stagingMemory(slots * slotSize), AccessFlags.LOCAL_WRITE);
    read = pd.registerMemory(ByteBuffer.allocateDirect(o.maxReadBytes()), AccessFlags.LOCAL_WRITE);
    credits =
        pd.registerMemory(
            ByteBuffer.allocateDirect(CreditWord.BYTES),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
  }

  /**
   * The staging ring's memory: a heap array where the device takes heap memory for the local side
   * (loopback) and the data path's AES-GCM of large records is a JCE one, so records are sealed
   * straight into their slots (the JCE's AES-GCM writes arrays at full speed, direct memory at
   * about half, RecordSealer); else direct memory — which openssl and gcrypt seal into straight,
   * and the JCE ones through the sealer's array and one copy.
   */
  private ByteBuffer stagingMemory(int bytes) {
    return context.context().queryDevice().localHeapMemory()
            && !AeadSelection.current().plan().bulk().nativeMemory()
        ? ByteBuffer.allocate(bytes)
        : ByteBuffer.allocateDirect(bytes);
  }

  /**
   * Called once the host chose record runs: the records one WRITE of client {@code client} may
   * carry, the queue pair's send SGEs. Fewer than a run may carry ({@link #RUN_SGES}: the device
   * offers fewer SGEs, or refused a queue pair with them) is a fallback, counted ({@link
   * #runFallbacks}) and logged: at info the first time on this device context, then at debug.
   */
  int runRecords(String client) {
    if (runLimit != null) {
      RUN_FALLBACKS.incrementAndGet();
      String line =
          "{}: record runs held to {} record(s) a WRITE, of the {} a run may carry: {} (provider {})";
      if (context.firstRunFallback()) {
        LOG.info(line, client, sendSges, RUN_SGES, runLimit, providerName());
      } else {
        LOG.debug(line, client, sendSges, RUN_SGES, runLimit, providerName());
      }
    }
    return sendSges;
  }

  /** Sessions of this process so far whose record runs the device held below 16 records. */
  static long runFallbacks() {
    return RUN_FALLBACKS.get();
  }

  /** The provider the queue pair is on ({@code soft}, {@code ibv}; never {@code auto}). */
  String providerName() {
    return context.context().device().providerName();
  }

  /** The queue pair's completions go to {@code target} (on the lane's poller) from now on. */
  void register(CompletionTarget target) {
    registeredQpn = qp.qpn();
    lane.register(registeredQpn, target);
  }

  /**
   * Closes the control connection (null: none, or closed already) and every device object; the lane
   * is left once the queue pair is destroyed (no completion reaches the client after that).
   */
  void close(ClientConnection connection) {
    if (connection != null) {
      connection.close();
    }
    close(qp);
    if (joined) {
      joined = false;
      context.lanes().leave(lane, registeredQpn, laneNeed);
    }
    for (AutoCloseable c : new AutoCloseable[] {staging, read, credits, pd, context}) {
      close(c);
    }
  }

  private static void close(AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.debug("closing {}: {}", c, e.getMessage());
      }
    }
  }
}
