package io.srdma.verbs;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp}, IBV_QPT_RC).
 *
 * <p>Life cycle, as with {@code ibv_modify_qp}: {@link #init} (RESET → INIT), then {@link
 * #readyToReceive} with the peer's {@link ConnectionInfo} (INIT → RTR), then {@link #readyToSend}
 * (RTR → RTS). Any error of the connection moves it to ERROR, where every outstanding and newly
 * posted request completes with {@link WcStatus#WR_FLUSH_ERR}.
 *
 * <p>A queue pair created with a {@link SharedReceiveQueue} takes its receives from there; entering
 * ERROR then flushes only the receive it had already taken for a message in progress, none of the
 * SRQ's.
 *
 * <p>Thread safety: {@link #postSend} and {@link #postReceive} may be called from several threads
 * (each call is atomic); state transitions and {@link #close} are serialized internally.
 */
public interface QueuePair extends AutoCloseable {
  /** The queue pair number. */
  int qpn();

  /** The domain it belongs to. */
  ProtectionDomain protectionDomain();

  /** The current state. */
  QpState state();

  /** What the peer needs to connect to this queue pair. */
  ConnectionInfo localInfo();

  /**
   * RESET → INIT.
   *
   * @param access remote operations incoming requests may perform on this QP (REMOTE_WRITE,
   *     REMOTE_READ); an incoming request needing a right the QP lacks fails with REM_ACCESS_ERR
   */
  void init(int access);

  /** INIT → RTR: connects to the peer described by {@code remote} and serves its requests. */
  void readyToReceive(ConnectionInfo remote);

  /** RTR → RTS: send work requests are processed from now on. */
  void readyToSend();

  /** Any state → ERROR: outstanding work is flushed. */
  void toError();

  /**
   * Posts one send work request ({@code ibv_post_send}).
   *
   * @throws VerbsException INVALID_STATE before RTS, RESOURCE_EXHAUSTED when the send queue is
   *     full, INVALID_ARGUMENT for a malformed request. Access problems are not exceptions: they
   *     complete with an error status.
   */
  void postSend(SendWorkRequest wr);

  /**
   * Posts {@code count} send work requests at once, as libibverbs' linked list does: they go out
   * together. On an exception none of them was posted.
   */
  void postSend(SendWorkRequest[] wrs, int count);

  /**
   * Posts a receive ({@code ibv_post_recv}); allowed from INIT on.
   *
   * @throws VerbsException INVALID_STATE in RESET, RESOURCE_EXHAUSTED when the receive queue is
   *     full, INVALID_ARGUMENT when the queue pair takes its receives from a {@link
   *     SharedReceiveQueue} (post them there)
   */
  void postReceive(ReceiveWorkRequest wr);

  /** Destroys the queue pair ({@code ibv_destroy_qp}); outstanding work is flushed first. */
  @Override
  void close();
}
