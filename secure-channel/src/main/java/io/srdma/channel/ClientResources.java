package io.srdma.channel;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device objects of one client on the process's shared device context: protection domain,
 * completion queue, queue pair, staging and read registrations; closed in reverse, the shared
 * context given back last. Used by the connecting and the closing thread only.
 */
final class ClientResources {
  private static final Logger LOG = LoggerFactory.getLogger(ClientResources.class);

  SharedDeviceContext context;
  ProtectionDomain pd;
  CompletionQueue cq;
  QueuePair qp;
  MemoryRegion staging;
  MemoryRegion read;

  void open(ClientOptions o) {
    context = SharedDeviceContext.acquire(o.provider(), o.device());
    pd = context.context().allocateProtectionDomain();
    int slots = o.stagingSlots();
    cq = context.context().createCompletionQueue(slots + 8);
    qp = pd.createQueuePair(new QueuePairAttributes(cq, cq, slots + 4, 1, 1, 1));
    qp.init(0);
    int slotSize = o.maxRecordPayload() + SealedLayout.RECORD_OVERHEAD;
    staging =
        pd.registerMemory(ByteBuffer.allocateDirect(slots * slotSize), AccessFlags.LOCAL_WRITE);
    read = pd.registerMemory(ByteBuffer.allocateDirect(o.maxReadBytes()), AccessFlags.LOCAL_WRITE);
  }

  /** Closes the control connection (null: none, or closed already) and every device object. */
  void close(ClientConnection connection) {
    if (connection != null) {
      connection.close();
    }
    for (AutoCloseable c : new AutoCloseable[] {qp, staging, read, cq, pd, context}) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          LOG.debug("closing {}: {}", c, e.getMessage());
        }
      }
    }
  }
}
