package io.srdma.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;

/**
 * A grant the authority counts against its peer's quota until it is released or expires.
 *
 * @param id the channel's grant id, unique among live grants
 * @param identity the peer holding it
 * @param tenant the tenant
 * @param region the region
 * @param operations the operations it carries
 * @param offset first byte
 * @param length bytes covered
 * @param ttl its lifetime as granted
 * @param issuedAt when it was issued
 * @param role the role that allowed it
 */
public record LiveGrant(
    String id,
    String identity,
    String tenant,
    String region,
    Set<Operation> operations,
    long offset,
    long length,
    Duration ttl,
    Instant issuedAt,
    String role) {

  /** Copies the set so the grant is immutable. */
  public LiveGrant {
    operations = Set.copyOf(operations);
  }

  /** When the grant expires. */
  public Instant expiresAt() {
    return issuedAt.plus(ttl);
  }
}
