package io.srdma.policy;

/** Why a request was allowed or denied. Everything but {@link #ALLOWED} is a denial. */
public enum DecisionReason {
  /** A role allowed the request. */
  ALLOWED,
  /** The arguments are malformed: no operation, negative offset, empty length, no TTL. */
  INVALID_REQUEST,
  /** The policy declares no such tenant. */
  UNKNOWN_TENANT,
  /** The identity belongs to another tenant than the one asked for. */
  TENANT_MISMATCH,
  /** No peer entry of the tenant matches the identity. */
  UNKNOWN_PEER,
  /** The tenant declares no such region. */
  UNKNOWN_REGION,
  /** {@code [offset, offset + length)} is not inside the region. */
  OUT_OF_BOUNDS,
  /** No role of the peer holds a permission implying every requested operation. */
  NOT_PERMITTED,
  /** The permitting role's scope does not allow one of the operations. */
  OPERATION_NOT_ALLOWED,
  /** The length is over the permitting role's max bytes per grant. */
  TOO_LARGE,
  /** The peer already holds the role's maximum of live grants. */
  QUOTA_EXCEEDED,
  /** A live grant outlives the role's max TTL after a reload (only in {@link ReloadResult}). */
  TTL_EXCEEDS_MAX
}
