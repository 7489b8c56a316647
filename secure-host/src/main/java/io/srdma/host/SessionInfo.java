package io.srdma.host;

import java.time.Instant;

/**
 * One session as an operator sees it.
 *
 * <p>Thread safety: an immutable snapshot. Buffers: none.
 *
 * @param sessionId hex of the 16-byte session id
 * @param identity the peer's identity from its certificate
 * @param tenant the peer's tenant
 * @param since when the session was established
 * @param epoch the current key epoch
 * @param recordsIn records opened from this peer
 * @param bytesIn plaintext bytes opened from this peer
 * @param liveGrants grants live on this session
 */
public record SessionInfo(
    String sessionId,
    String identity,
    String tenant,
    Instant since,
    int epoch,
    long recordsIn,
    long bytesIn,
    int liveGrants) {}
