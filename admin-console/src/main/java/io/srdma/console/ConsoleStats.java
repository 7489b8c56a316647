package io.srdma.console;

/**
 * A snapshot of the host's counters. Counters ({@code long}) only grow while the host runs; the
 * console derives rates from the difference of two snapshots. Gauges ({@code int}) are current
 * values.
 *
 * @param bytesMoved payload bytes moved by RDMA operations under grants, both directions
 * @param recordsOpened sealed records opened successfully
 * @param recordsRejected sealed records refused (bad tag, replay, out of bounds)
 * @param operations grant requests plus records: the operation rate the console charts
 * @param sessions live sessions now
 * @param liveGrants live grants now
 * @param denials grant requests the policy denied
 * @param remoteAccessErrors remote access errors (accesses outside a grant, unknown rkeys)
 * @param authFailures failed peer authentications (refused TLS handshakes); the console counts its
 *     own failed logins separately
 * @param staleNotifications write notifications naming an ended grant's slot or a free one
 * @param sessionsTerminated sessions the host ended itself (certificate revoked or expired,
 *     lifetime, rejected-record budget)
 * @param handshakeDeadlines connections closed before authentication for a missed deadline (first
 *     TLS byte, whole handshake)
 * @param responderRefusals HELLOs naming a responder address that is not the peer's own
 * @param rateLimited connections refused by the per-address limits before authentication
 * @param quotaRefusals sessions refused by the session quotas
 * @param receiveCreditWrites receive credits the host wrote to its clients
 * @param receiveCreditsDeferred receive credits that waited for a session's busy send queue
 */
public record ConsoleStats(
    long bytesMoved,
    long recordsOpened,
    long recordsRejected,
    long operations,
    int sessions,
    int liveGrants,
    long denials,
    long remoteAccessErrors,
    long authFailures,
    long staleNotifications,
    long sessionsTerminated,
    long handshakeDeadlines,
    long responderRefusals,
    long rateLimited,
    long quotaRefusals,
    long receiveCreditWrites,
    long receiveCreditsDeferred) {

  /** A snapshot without the pre-authentication and enforcement counters (all zero). */
  public ConsoleStats(
      long bytesMoved,
      long recordsOpened,
      long recordsRejected,
      long operations,
      int sessions,
      int liveGrants,
      long denials,
      long remoteAccessErrors,
      long authFailures) {
    this(
        bytesMoved,
        recordsOpened,
        recordsRejected,
        operations,
        sessions,
        liveGrants,
        denials,
        remoteAccessErrors,
        authFailures,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0);
  }
}
