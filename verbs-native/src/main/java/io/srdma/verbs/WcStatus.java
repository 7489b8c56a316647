package io.srdma.verbs;

/**
 * Work completion status codes ({@code enum ibv_wc_status}), in libibverbs' order and numbering.
 */
public enum WcStatus {
  /** The work request completed. */
  SUCCESS(0),
  /** A local length error: the message did not fit the receive buffers. */
  LOC_LEN_ERR(1),
  /** A local queue pair operation error. */
  LOC_QP_OP_ERR(2),
  /** A local EE context error (not used on RC). */
  LOC_EEC_OP_ERR(3),
  /** A local protection error: an SGE names memory the QP may not use. */
  LOC_PROT_ERR(4),
  /** Flushed: the QP entered ERROR before this request was processed. */
  WR_FLUSH_ERR(5),
  /** A memory window bind failed. */
  MW_BIND_ERR(6),
  /** An unexpected response arrived. */
  BAD_RESP_ERR(7),
  /** A local access error. */
  LOC_ACCESS_ERR(8),
  /** The remote peer found the request invalid (e.g. too large for its receive). */
  REM_INV_REQ_ERR(9),
  /** The remote peer refused the access: bad rkey, PD, window, rights or bounds. */
  REM_ACCESS_ERR(10),
  /** The remote peer failed to carry out the operation. */
  REM_OP_ERR(11),
  /** The transport retried until its budget ran out (peer unreachable or dead). */
  RETRY_EXC_ERR(12),
  /** The remote peer had no receive posted for the whole RNR retry budget. */
  RNR_RETRY_EXC_ERR(13),
  /** Local RDD violation (not used on RC). */
  LOC_RDD_VIOL_ERR(14),
  /** Remote invalid RD request (not used on RC). */
  REM_INV_RD_REQ_ERR(15),
  /** The remote peer aborted the operation. */
  REM_ABORT_ERR(16),
  /** Invalid EE context number (not used on RC). */
  INV_EECN_ERR(17),
  /** Invalid EE context state (not used on RC). */
  INV_EEC_STATE_ERR(18),
  /** A fatal device error. */
  FATAL_ERR(19),
  /** The response did not arrive in time. */
  RESP_TIMEOUT_ERR(20),
  /** Any other error. */
  GENERAL_ERR(21);

  private static final WcStatus[] BY_CODE = new WcStatus[22];

  static {
    for (WcStatus s : values()) {
      BY_CODE[s.code] = s;
    }
  }

  private final int code;

  WcStatus(int code) {
    this.code = code;
  }

  /** The libibverbs value. */
  public int code() {
    return code;
  }

  /** The status with libibverbs value {@code code}; unknown values map to GENERAL_ERR. */
  public static WcStatus fromCode(int code) {
    return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : GENERAL_ERR;
  }
}
