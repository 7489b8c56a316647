package io.srdma.verbs;

/**
 * A shared receive queue ({@code struct ibv_srq}): one pool of posted receives that many queue
 * pairs of the same {@link ProtectionDomain} draw from. A queue pair created with one ({@link
 * QueuePairAttributes#withSharedReceiveQueue}) takes the receive for each incoming SEND,
 * SEND_WITH_IMM and RDMA_WRITE_WITH_IMM from here, oldest first, whichever peer it came from; its
 * own {@link QueuePair#postReceive} refuses. The completion of such a receive arrives on that queue
 * pair's receive CQ and names it in {@link WorkCompletion#qpNum()}, so one CQ shared by all of them
 * tells its consumer where each message came from.
 *
 * <p>An empty SRQ is "receiver not ready" for the queue pair that needs a receive, exactly as an
 * empty receive queue of its own: the sender retries for the RNR budget, then fails with
 * RNR_RETRY_EXC_ERR. One queue pair entering ERROR flushes none of the receives still waiting here
 * (as in libibverbs): they stay for the other queue pairs.
 *
 * <p>Thread safety: {@link #postReceive} may be called from any number of threads at once; {@link
 * #close} from any thread.
 */
public interface SharedReceiveQueue extends AutoCloseable {
  /** The domain it belongs to; queue pairs using it must belong to the same domain. */
  ProtectionDomain protectionDomain();

  /**
   * The most receives it holds at once: at least the capacity asked for (a device may round up, as
   * rxe does to 2^n - 1); posting more fails with RESOURCE_EXHAUSTED.
   */
  int capacity();

  /** The most SGEs one receive may have, as asked for at creation. */
  int maxSge();

  /**
   * Posts a receive ({@code ibv_post_srq_recv}). Thread-safe.
   *
   * @throws VerbsException RESOURCE_EXHAUSTED when {@link #capacity()} receives are waiting,
   *     INVALID_ARGUMENT for more than {@link #maxSge()} SGEs, CLOSED after {@link #close()}
   */
  void postReceive(ReceiveWorkRequest wr);

  /**
   * Destroys the queue ({@code ibv_destroy_srq}); receives still waiting are discarded without
   * completions. Closing a closed queue does nothing.
   *
   * @throws VerbsException BUSY (libibverbs' EBUSY) while queue pairs created with it are open:
   *     close them first
   */
  @Override
  void close();
}
