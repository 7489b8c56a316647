package io.srdma.policy;

/** Reads peer identities of the form {@code srdma://<tenant>/<peer>}. */
public final class PeerIdentity {
  /** The scheme every identity starts with. */
  public static final String PREFIX = "srdma://";

  private PeerIdentity() {}

  /**
   * The tenant part of an identity.
   *
   * @param identity e.g. {@code srdma://acme/trainer-1}
   * @return {@code acme}, or null if the identity is not {@code srdma://<tenant>/<peer>}
   */
  public static String tenantOf(String identity) {
    if (identity == null || !identity.startsWith(PREFIX)) {
      return null;
    }
    int slash = identity.indexOf('/', PREFIX.length());
    if (slash <= PREFIX.length() || slash == identity.length() - 1) {
      return null;
    }
    return identity.substring(PREFIX.length(), slash);
  }

  /**
   * Whether an identity belongs to a tenant, without allocating.
   *
   * @param identity a peer identity
   * @param tenant a tenant name
   * @return true if the identity is {@code srdma://<tenant>/<something>}
   */
  public static boolean belongsTo(String identity, String tenant) {
    int slash = PREFIX.length() + tenant.length();
    return identity.length() > slash + 1
        && identity.startsWith(PREFIX)
        && identity.regionMatches(PREFIX.length(), tenant, 0, tenant.length())
        && identity.charAt(slash) == '/'
        && identity.indexOf('/', slash + 1) < 0;
  }
}
