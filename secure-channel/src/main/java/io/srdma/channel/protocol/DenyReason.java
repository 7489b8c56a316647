package io.srdma.channel.protocol;

/**
 * Why a grant request was denied (GRANT_DENIED). The first ten mirror the access policy's {@code
 * DecisionReason} by name, so {@code DenyReason.valueOf(decision.name())} maps a denial; the rest
 * are the host's own.
 */
public enum DenyReason {
  /** No operation, negative offset, empty length or no TTL. */
  INVALID_REQUEST(1),
  /** The policy declares no such tenant. */
  UNKNOWN_TENANT(2),
  /** The identity belongs to another tenant. */
  TENANT_MISMATCH(3),
  /** No peer entry matches the identity. */
  UNKNOWN_PEER(4),
  /** The tenant declares no such region. */
  UNKNOWN_REGION(5),
  /** The range is not inside the region. */
  OUT_OF_BOUNDS(6),
  /** No role permits the operations. */
  NOT_PERMITTED(7),
  /** The permitting role's scope does not allow an operation. */
  OPERATION_NOT_ALLOWED(8),
  /** Over the role's max bytes per grant. */
  TOO_LARGE(9),
  /** The peer holds the role's maximum of live grants. */
  QUOTA_EXCEEDED(10),
  /** The policy allows it but the host has not registered that region. */
  REGION_UNAVAILABLE(64),
  /** Too many requests; try later. */
  RATE_LIMITED(65),
  /** No memory window or other resource left on the host. */
  RESOURCE_EXHAUSTED(66),
  /** The host failed; details are in its log, not on the wire. */
  INTERNAL_ERROR(67);

  private final int code;

  DenyReason(int code) {
    this.code = code;
  }

  /** The wire code (u16). */
  public int code() {
    return code;
  }

  /**
   * The reason with this wire code.
   *
   * @throws ProtocolException BAD_ENUM when no reason has it
   */
  public static DenyReason fromCode(int code) {
    for (DenyReason r : values()) {
      if (r.code == code) {
        return r;
      }
    }
    throw new ProtocolException(ProtocolException.Reason.BAD_ENUM, "deny reason " + code);
  }
}
