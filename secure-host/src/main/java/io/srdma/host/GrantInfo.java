package io.srdma.host;

import io.srdma.channel.Access;
import java.time.Instant;
import java.util.Set;

/**
 * One live grant as an operator sees it.
 *
 * <p>Thread safety: an immutable snapshot. Buffers: none.
 *
 * @param grantId the grant's id
 * @param sessionId hex of the holder's session id
 * @param identity the holder's identity
 * @param tenant the tenant
 * @param region the region
 * @param offset first granted byte
 * @param length granted bytes
 * @param access granted operations
 * @param issuedAt when it was issued
 * @param expiresAt when it expires
 * @param scopedBy {@code window} (type-2 memory window) or {@code region} (per-grant region)
 */
public record GrantInfo(
    long grantId,
    String sessionId,
    String identity,
    String tenant,
    String region,
    long offset,
    long length,
    Set<Access> access,
    Instant issuedAt,
    Instant expiresAt,
    String scopedBy) {
  /** Copies the set. */
  public GrantInfo {
    access = Set.copyOf(access);
  }
}
