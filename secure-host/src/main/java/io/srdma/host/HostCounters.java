package io.srdma.host;

import java.util.concurrent.atomic.LongAdder;

/**
 * The host's running counters ({@link HostStats} is their snapshot). Written from every host thread
 * (sessions, openers, watchdog); thread-safe.
 */
final class HostCounters {
  final LongAdder sessionsOpened = new LongAdder();
  final LongAdder authFailures = new LongAdder();
  final LongAdder rateLimited = new LongAdder();
  final LongAdder quotaRefusals = new LongAdder();
  final LongAdder grantsIssued = new LongAdder();
  final LongAdder denials = new LongAdder();
  final LongAdder revocations = new LongAdder();
  final LongAdder recordsOpened = new LongAdder();
  final LongAdder bytesOpened = new LongAdder();
  final LongAdder recordsRejected = new LongAdder();
  final LongAdder remoteAccessErrors = new LongAdder();
  final LongAdder protocolErrors = new LongAdder();
  final LongAdder staleNotifications = new LongAdder();
  final LongAdder sessionsTerminated = new LongAdder();
  final LongAdder handshakeDeadlines = new LongAdder();
  final LongAdder responderRefusals = new LongAdder();
  final LongAdder receiveCreditWrites = new LongAdder();
  final LongAdder receiveCreditsDeferred = new LongAdder();
  final LongAdder writeNotifications = new LongAdder();

  /** A snapshot, with the two gauges the host counts itself. */
  HostStats snapshot(int sessions, int liveGrants) {
    return new HostStats(
        sessions,
        liveGrants,
        sessionsOpened.sum(),
        authFailures.sum(),
        rateLimited.sum(),
        quotaRefusals.sum(),
        grantsIssued.sum(),
        denials.sum(),
        revocations.sum(),
        recordsOpened.sum(),
        bytesOpened.sum(),
        recordsRejected.sum(),
        remoteAccessErrors.sum(),
        protocolErrors.sum(),
        staleNotifications.sum(),
        sessionsTerminated.sum(),
        handshakeDeadlines.sum(),
        responderRefusals.sum(),
        receiveCreditWrites.sum(),
        receiveCreditsDeferred.sum(),
        writeNotifications.sum());
  }
}
