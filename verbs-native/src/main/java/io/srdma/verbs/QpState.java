package io.srdma.verbs;

/**
 * States of a reliable-connected queue pair ({@code enum ibv_qp_state}). The legal path is RESET →
 * INIT → RTR → RTS; any state may go to ERROR, and ERROR or any other state may go back to RESET.
 */
public enum QpState {
  /** Just created, or reset: nothing can be posted. */
  RESET,
  /** Receives may be posted; nothing is processed. */
  INIT,
  /** Ready to receive: the remote peer is known and incoming requests are served. */
  RTR,
  /** Ready to send: send work requests are processed. */
  RTS,
  /**
   * Failed: outstanding and newly posted work requests complete with {@link WcStatus#WR_FLUSH_ERR}.
   */
  ERROR
}
