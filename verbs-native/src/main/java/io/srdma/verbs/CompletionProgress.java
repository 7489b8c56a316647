package io.srdma.verbs;

/**
 * Who does the receiving side's work of the queue pairs whose receives a completion queue reports
 * ({@link DeviceContext#createCompletionQueue(int, CompletionProgress)}): like libfabric's {@code
 * FI_PROGRESS_AUTO} and {@code FI_PROGRESS_MANUAL}.
 *
 * <p>On an RNIC ({@code ibv}) and on the in-process {@code loopback} provider the hardware, or the
 * writer's own call, places incoming writes: both values mean the same there. The {@code soft}
 * provider emulates the RNIC with threads of its own; {@link #POLLER} lets it do that work on the
 * thread that polls the queue instead, which saves a thread wake-up and a hand-off per batch of
 * incoming requests.
 */
public enum CompletionProgress {
  /** The device's own threads place incoming requests, whether or not anyone polls (default). */
  DEVICE,

  /**
   * The thread that polls or awaits the queue also places the incoming requests of the queue pairs
   * whose receive queue it is — once their connection is established and checked, never before. The
   * caller promises to poll or await continuously, from one thread at a time, without gaps longer
   * than a small fraction of the transport timeout: while nobody polls, those queue pairs' incoming
   * WRITEs, READs and SENDs wait (the peer's requests time out after {@link
   * DeviceOptions#transportTimeout()}).
   */
  POLLER
}
