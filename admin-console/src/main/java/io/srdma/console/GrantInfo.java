package io.srdma.console;

import io.srdma.policy.Operation;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * One live grant (a bound memory window), as the console lists it. Never carries the rkey.
 *
 * @param grantId the grant id, unique among live grants
 * @param identity the peer holding it
 * @param tenant its tenant
 * @param region the region name
 * @param offset first byte of the granted range
 * @param length bytes covered
 * @param operations the operations it allows
 * @param issuedAt when it was issued
 * @param expiresAt when it expires
 * @param sessionId the session it is bound to
 */
public record GrantInfo(
    String grantId,
    String identity,
    String tenant,
    String region,
    long offset,
    long length,
    Set<Operation> operations,
    Instant issuedAt,
    Instant expiresAt,
    String sessionId) {

  /** Checks that the names are present and copies the set so the record is immutable. */
  public GrantInfo {
    Objects.requireNonNull(grantId, "grantId");
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(region, "region");
    Objects.requireNonNull(issuedAt, "issuedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
    operations = Set.copyOf(operations);
  }
}
