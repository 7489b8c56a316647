package io.srdma.host;

/**
 * Counters of a {@link RegionHost} since it started (a snapshot).
 *
 * <p>Thread safety: an immutable snapshot. Buffers: none.
 *
 * @param sessions sessions open now
 * @param liveGrants grants live now
 * @param sessionsOpened sessions established in all
 * @param authFailures connections refused during authentication (TLS, identity, tenant; a first
 *     byte that is not TLS)
 * @param rateLimited connections refused by the failed-authentication or handshake limit
 * @param quotaRefusals sessions refused by a session quota
 * @param grantsIssued grants issued
 * @param denials grant requests denied
 * @param revocations grants ended by the host (revoked, expired, policy change, session end)
 * @param recordsOpened records opened and delivered
 * @param bytesOpened plaintext bytes delivered
 * @param recordsRejected records refused (tampered, replayed, relocated, truncated…)
 * @param remoteAccessErrors sessions whose queue pair the RNIC put into error
 * @param protocolErrors sessions ended for a protocol violation
 * @param staleNotifications write notifications naming a free slot or an ended grant (refused,
 *     never opened; also counted in {@code recordsRejected})
 * @param sessionsTerminated live sessions the host ended on its own: certificate revoked or
 *     expired, session lifetime reached, too many rejected records
 * @param handshakeDeadlines connections closed before authentication for sending nothing by the
 *     first-record deadline or not finishing the handshake in time
 * @param responderRefusals sessions refused for naming a responder address that is not the peer's
 *     own (request forgery)
 * @param receiveCreditWrites receive credits written to clients (one per half receive depth of
 *     receives reposted, docs/protocol.md)
 * @param receiveCreditsDeferred receive credits that fell due while the session's send queue was
 *     busy (a grant's bind or invalidation, or four credit writes unacknowledged) and were written
 *     by a retry: many of them mean openers or grant scoping that hold writers back
 * @param writeNotifications WRITE_WITH_IMM notifications taken (each consumed a receive): with
 *     record runs, fewer than the records they carried (docs/protocol.md)
 */
public record HostStats(
    int sessions,
    int liveGrants,
    long sessionsOpened,
    long authFailures,
    long rateLimited,
    long quotaRefusals,
    long grantsIssued,
    long denials,
    long revocations,
    long recordsOpened,
    long bytesOpened,
    long recordsRejected,
    long remoteAccessErrors,
    long protocolErrors,
    long staleNotifications,
    long sessionsTerminated,
    long handshakeDeadlines,
    long responderRefusals,
    long receiveCreditWrites,
    long receiveCreditsDeferred,
    long writeNotifications) {}
