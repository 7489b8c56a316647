package io.srdma.channel;

/**
 * Counters of a {@link RegionHost} since it started (a snapshot).
 *
 * @param sessions sessions open now
 * @param liveGrants grants live now
 * @param sessionsOpened sessions established in all
 * @param authFailures connections refused during authentication (TLS, identity, tenant)
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
    long protocolErrors) {}
