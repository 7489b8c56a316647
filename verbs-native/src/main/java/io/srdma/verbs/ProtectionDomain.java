package io.srdma.verbs;

import java.nio.ByteBuffer;

/**
 * A protection domain ({@code struct ibv_pd}). Memory regions, windows and queue pairs of different
 * domains cannot be used together: a remote access through a QP of one domain to a region of
 * another fails with REM_ACCESS_ERR even with the correct rkey.
 */
public interface ProtectionDomain extends AutoCloseable {
  /** The device context that owns this domain. */
  DeviceContext context();

  /**
   * Registers memory ({@code ibv_reg_mr}): the bytes of {@code buffer} from its position to its
   * limit. The buffer must be direct and writable — or, where {@link
   * DeviceAttributes#localHeapMemory()} says so ({@code loopback}), a writable heap buffer for
   * memory without REMOTE_WRITE, REMOTE_READ or MW_BIND; its position and limit may change
   * afterwards without effect on the region.
   *
   * @param buffer a direct (or, as above, heap), writable buffer
   * @param access {@link AccessFlags} bits; REMOTE_WRITE needs LOCAL_WRITE, as in libibverbs
   * @throws VerbsException INVALID_ARGUMENT for a heap buffer the device does not take, a read-only
   *     buffer or bad flags
   */
  MemoryRegion registerMemory(ByteBuffer buffer, int access);

  /**
   * Allocates a type-2 memory window ({@code ibv_alloc_mw} with {@code IBV_MW_TYPE_2}), unbound.
   * Bind it with a {@link WrOpcode#BIND_MW} work request on the queue pair it should serve.
   */
  MemoryWindow allocateMemoryWindow();

  /**
   * Creates a reliable-connected queue pair in RESET ({@code ibv_create_qp}, IBV_QPT_RC).
   *
   * @throws VerbsException INVALID_ARGUMENT when a CQ or the {@link SharedReceiveQueue} of {@code
   *     attributes} belongs to another device or domain, CLOSED when that SRQ is closed
   */
  QueuePair createQueuePair(QueuePairAttributes attributes);

  /**
   * Creates a shared receive queue ({@code ibv_create_srq}) that queue pairs of this domain can
   * take their receives from. Providers without shared receive queues refuse; this default does.
   *
   * @param capacity the most receives it holds (>= 1)
   * @param maxSge the most SGEs per receive (>= 1)
   * @throws VerbsException NOT_SUPPORTED where the provider has no shared receive queues,
   *     INVALID_ARGUMENT for a capacity or SGE count out of the device's range
   */
  default SharedReceiveQueue createSharedReceiveQueue(int capacity, int maxSge) {
    throw new VerbsException(
        VerbsException.Reason.NOT_SUPPORTED,
        "create_srq",
        "the "
            + context().device().providerName()
            + " provider does not support shared receive queues; use a receive queue per queue"
            + " pair");
  }

  /**
   * Deallocates the domain.
   *
   * @throws VerbsException BUSY while regions, windows or queue pairs of it are open
   */
  @Override
  void close();
}
