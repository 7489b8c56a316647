package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.WcStatus;
import org.junit.jupiter.api.Test;

/**
 * A refusal by the target and a broken data path get different reasons, flushes follow the cause.
 */
class DataPathFailureTest {
  private static final ChannelException.Reason REFUSED =
      ChannelException.Reason.REMOTE_ACCESS_ERROR;
  private static final ChannelException.Reason BROKEN = ChannelException.Reason.TRANSPORT_FAILED;

  @Test
  void shouldTellARefusalFromABrokenPath() {
    assertEquals(REFUSED, DataPathFailure.reason(WcStatus.REM_ACCESS_ERR, null));
    assertEquals(REFUSED, DataPathFailure.reason(WcStatus.REM_INV_REQ_ERR, null));
    assertEquals(REFUSED, DataPathFailure.reason(WcStatus.REM_OP_ERR, null));
    assertEquals(BROKEN, DataPathFailure.reason(WcStatus.RETRY_EXC_ERR, null));
    assertEquals(BROKEN, DataPathFailure.reason(WcStatus.RNR_RETRY_EXC_ERR, null));
    assertEquals(BROKEN, DataPathFailure.reason(WcStatus.BAD_RESP_ERR, null));
    assertEquals(BROKEN, DataPathFailure.reason(WcStatus.FATAL_ERR, null));
  }

  @Test
  void shouldGiveAFlushedCompletionTheReasonOfTheFirstFailure() {
    assertEquals(REFUSED, DataPathFailure.reason(WcStatus.WR_FLUSH_ERR, WcStatus.REM_ACCESS_ERR));
    assertEquals(BROKEN, DataPathFailure.reason(WcStatus.WR_FLUSH_ERR, WcStatus.RETRY_EXC_ERR));
    assertEquals(BROKEN, DataPathFailure.reason(WcStatus.WR_FLUSH_ERR, null));
    ChannelException e =
        DataPathFailure.of("write", WcStatus.WR_FLUSH_ERR, WcStatus.REM_ACCESS_ERR);
    assertEquals(REFUSED, e.reason());
    assertTrue(
        e.getMessage().contains("WR_FLUSH_ERR") && e.getMessage().contains("REM_ACCESS_ERR"),
        e.getMessage());
  }
}
