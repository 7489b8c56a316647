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
    long authFailures) {}
