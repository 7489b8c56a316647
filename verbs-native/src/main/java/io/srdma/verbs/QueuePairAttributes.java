package io.srdma.verbs;

/**
 * Capacities and completion queues of a new RC queue pair ({@code struct ibv_qp_init_attr}).
 *
 * @param sendCq completions of send work requests go here
 * @param recvCq completions of receives go here
 * @param maxSendWr the most outstanding send work requests
 * @param maxRecvWr the most outstanding receives; ignored with a shared receive queue
 * @param maxSendSge the most SGEs per send work request
 * @param maxRecvSge the most SGEs per receive; ignored with a shared receive queue
 * @param sharedReceiveQueue where the queue pair takes its receives from ({@code
 *     ibv_qp_init_attr.srq}), or null for a receive queue of its own
 */
public record QueuePairAttributes(
    CompletionQueue sendCq,
    CompletionQueue recvCq,
    int maxSendWr,
    int maxRecvWr,
    int maxSendSge,
    int maxRecvSge,
    SharedReceiveQueue sharedReceiveQueue) {

  /** Validates the capacities. */
  public QueuePairAttributes {
    if (sendCq == null || recvCq == null) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "create_qp", "send and receive CQ are required");
    }
    if (maxSendWr < 1 || maxRecvWr < 0 || maxSendSge < 1 || maxRecvSge < 0) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "create_qp",
          "maxSendWr and maxSendSge must be >= 1, maxRecvWr and maxRecvSge >= 0");
    }
  }

  /** Attributes of a queue pair with a receive queue of its own. */
  public QueuePairAttributes(
      CompletionQueue sendCq,
      CompletionQueue recvCq,
      int maxSendWr,
      int maxRecvWr,
      int maxSendSge,
      int maxRecvSge) {
    this(sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, null);
  }

  /** Attributes with one CQ for both queues and common capacities. */
  public static QueuePairAttributes of(CompletionQueue cq, int maxWr, int maxSge) {
    return new QueuePairAttributes(cq, cq, maxWr, maxWr, maxSge, maxSge);
  }

  /**
   * These attributes with {@code srq} as the source of receives (null: a receive queue of its own).
   */
  public QueuePairAttributes withSharedReceiveQueue(SharedReceiveQueue srq) {
    return new QueuePairAttributes(
        sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, srq);
  }
}
