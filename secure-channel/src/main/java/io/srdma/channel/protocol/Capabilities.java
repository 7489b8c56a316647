package io.srdma.channel.protocol;

import io.srdma.keys.TlsBinding;

/**
 * The capability bits of HELLO and HELLO_ACK (docs/protocol.md). The client announces what it
 * supports; the host answers with the bits both support; a bit the client did not announce in the
 * answer is a protocol error. Unknown bits in HELLO are ignored. Stateless; thread-safe.
 */
public final class Capabilities {
  /**
   * Bit 0: this side can bind session keys to the TLS 1.3 exporter (Java 25 and later). When both
   * sides have it, the key schedule's binding is {@link TlsBinding.Kind#EXPORTER}; otherwise {@link
   * TlsBinding.Kind#CERTIFICATE_TRANSCRIPT}.
   */
  public static final int TLS_EXPORTER = 1;

  /**
   * Bit 1: HELLO_ACK carries the receives the host keeps posted for the session ({@link
   * HelloAckFlyweight#receiveDepth()}, 1 or more), and the client keeps no more records in flight
   * than that: a WRITE_WITH_IMM past the posted receives waits for one (RNR), on an RNIC for the
   * RNR NAK timer. Both ends of this version set it.
   */
  public static final int RECEIVE_DEPTH = 2;

  /**
   * Bit 2: the host returns receive credits. The client sends {@link MessageType#CREDIT_WORD} (a
   * 4-byte word it registered, remote-writable) before its KEY_CONFIRM, and the host RDMA-WRITEs
   * there the low 32 bits of the count of the session's receives it has reposted; the client keeps
   * no more than {@link HelloAckFlyweight#receiveDepth()} records posted beyond that count, instead
   * of capping records in flight by its write completions (which come back before the host
   * reposted). Counts only together with {@link #RECEIVE_DEPTH}: {@link #shared} never chooses it
   * alone and {@link #checkAnswer} refuses an answer that does. Both ends of this version set it.
   */
  public static final int RECEIVE_CREDITS = 4;

  /**
   * Bit 3: record runs. One WRITE_WITH_IMM may carry several records end to end in one grant: its
   * immediate names the first record's offset, and the host opens record after record from there
   * until the WRITE's bytes are used (each sealed for, bound to and checked at its own offset; a
   * remainder that is not a whole record is rejected like a truncated one). The run consumes one
   * receive and is one notification. Without the bit every record is its own WRITE_WITH_IMM and the
   * host opens one record per notification. Both ends of this version set it.
   */
  public static final int RECORD_RUNS = 8;

  /**
   * With {@link #RECORD_RUNS}: the most records one WRITE_WITH_IMM may carry. The host opens no
   * more of one notification and rejects a record past them like any other (so one notification
   * costs the host at most this many opens and listener calls, whatever the grant's size); a client
   * gathers no more into one WRITE.
   */
  public static final int RUN_RECORDS = 16;

  private Capabilities() {}

  /**
   * With {@link #RECEIVE_CREDITS}: the reposts the host lets accumulate before it writes a credit,
   * half the receive depth (at least 1); a client's post list is at most {@code receiveDepth -
   * creditEvery(receiveDepth) + 1} records, so a client waiting for room always has a credit coming
   * (docs/protocol.md, receive credits).
   */
  public static int creditEvery(int receiveDepth) {
    return Math.max(1, receiveDepth / 2);
  }

  /** What this side supports. */
  public static int local() {
    return RECEIVE_DEPTH
        | RECEIVE_CREDITS
        | RECORD_RUNS
        | (TlsBinding.exporterAvailable() ? TLS_EXPORTER : 0);
  }

  /**
   * The host's answer to a client's announced bits: those both support, without {@link
   * #RECEIVE_CREDITS} unless {@link #RECEIVE_DEPTH} is among them (credits are counted against the
   * depth).
   */
  public static int shared(int announced) {
    int both = announced & local();
    return (both & RECEIVE_DEPTH) != 0 ? both : both & ~RECEIVE_CREDITS;
  }

  /**
   * Checks the host's answer against what this client announced.
   *
   * @return {@code answer}
   * @throws ProtocolException {@link ProtocolException.Reason#BAD_VALUE} if the host chose a bit
   *     the client did not announce, or {@link #RECEIVE_CREDITS} without {@link #RECEIVE_DEPTH}
   */
  public static int checkAnswer(int announced, int answer) {
    if ((answer & ~announced) != 0) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE,
          "host chose capabilities 0x"
              + Integer.toHexString(answer)
              + " beyond those announced, 0x"
              + Integer.toHexString(announced));
    }
    if ((answer & RECEIVE_CREDITS) != 0 && (answer & RECEIVE_DEPTH) == 0) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE,
          "host chose RECEIVE_CREDITS (0x"
              + Integer.toHexString(RECEIVE_CREDITS)
              + ") without RECEIVE_DEPTH (0x"
              + Integer.toHexString(RECEIVE_DEPTH)
              + ")");
    }
    return answer;
  }

  /** The binding kind that {@code shared} capabilities select. */
  public static TlsBinding.Kind bindingKind(int shared) {
    return (shared & TLS_EXPORTER) != 0
        ? TlsBinding.Kind.EXPORTER
        : TlsBinding.Kind.CERTIFICATE_TRANSCRIPT;
  }
}
