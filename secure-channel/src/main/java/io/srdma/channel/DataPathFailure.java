package io.srdma.channel;

import io.srdma.verbs.WcStatus;

/**
 * Names a failed completion for the caller: a target that refused the access ({@link
 * ChannelException.Reason#REMOTE_ACCESS_ERROR}, a security event) is told apart from a data path
 * that broke ({@link ChannelException.Reason#TRANSPORT_FAILED}: peer gone, link down). A flushed
 * completion takes the reason of the failure that put the queue pair in error.
 */
final class DataPathFailure {
  private DataPathFailure() {}

  /**
   * The reason for a failed completion.
   *
   * @param status the completion's status (not {@code SUCCESS})
   * @param first the first failure of this queue pair, or null when this is it
   */
  static ChannelException.Reason reason(WcStatus status, WcStatus first) {
    WcStatus cause = status == WcStatus.WR_FLUSH_ERR && first != null ? first : status;
    return switch (cause) {
      case RETRY_EXC_ERR, RNR_RETRY_EXC_ERR, BAD_RESP_ERR, REM_ABORT_ERR, FATAL_ERR, WR_FLUSH_ERR ->
          ChannelException.Reason.TRANSPORT_FAILED;
      default -> ChannelException.Reason.REMOTE_ACCESS_ERROR;
    };
  }

  /** The exception for a failed completion of {@code what} ("write", "RDMA READ of grant 7"). */
  static ChannelException of(String what, WcStatus status, WcStatus first) {
    ChannelException.Reason reason = reason(status, first);
    String why =
        reason == ChannelException.Reason.TRANSPORT_FAILED
            ? " (the data path to the host broke)"
            : " (the target refused the access)";
    String after =
        status == WcStatus.WR_FLUSH_ERR && first != null && first != status
            ? " after the queue pair failed with " + first
            : "";
    return new ChannelException(reason, what + " completed with " + status + after + why);
  }
}
