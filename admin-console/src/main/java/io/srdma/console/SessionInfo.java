package io.srdma.console;

import java.time.Instant;
import java.util.Objects;

/**
 * One live secure-channel session, as the console lists it.
 *
 * @param sessionId the host's session id
 * @param identity the peer identity from its certificate, {@code srdma://<tenant>/<peer>}
 * @param tenant the peer's tenant
 * @param since when the session was established
 * @param epoch the current key epoch (incremented by each rekey)
 * @param bytesIn payload bytes received on this session
 * @param bytesOut payload bytes sent on this session
 * @param records sealed records opened and sent on this session
 */
public record SessionInfo(
    String sessionId,
    String identity,
    String tenant,
    Instant since,
    int epoch,
    long bytesIn,
    long bytesOut,
    long records) {

  /** Checks that the names are present. */
  public SessionInfo {
    Objects.requireNonNull(sessionId, "sessionId");
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(since, "since");
  }
}
