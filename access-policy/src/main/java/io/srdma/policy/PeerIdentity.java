package io.srdma.policy;

import java.util.regex.Pattern;

/**
 * Reads peer identities of the form {@code srdma://<tenant>/<peer>}, and holds the rule for the
 * names in them.
 *
 * <p>The name rule is the one {@code io.srdma.keys.PeerIdentity} enforces when {@code srdma cert
 * issue} makes a certificate: 1 to 63 characters of {@code a-z}, {@code 0-9} and {@code -},
 * starting and ending with a letter or digit. This module does not depend on key-exchange, so the
 * rule lives in both; a cli test checks that the two agree. Thread-safe: stateless.
 */
public final class PeerIdentity {
  /** The scheme every identity starts with. */
  public static final String PREFIX = "srdma://";

  /**
   * The tenant of host certificates ({@code srdma://host/...}); no policy may declare it, so that
   * no policy role can ever be held by a host identity.
   */
  public static final String HOST_TENANT = "host";

  /** A tenant or peer name that a certificate can carry, as a regular expression. */
  public static final String NAME_RULE = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";

  /** {@link #NAME_RULE} in words, for error messages. */
  public static final String NAME_RULE_TEXT =
      "1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit";

  private static final Pattern NAME = Pattern.compile(NAME_RULE);

  private PeerIdentity() {}

  /**
   * Whether a tenant or peer name is one a certificate can carry ({@link #NAME_RULE}).
   *
   * @param name the name
   * @return true if it follows the rule
   */
  public static boolean isName(String name) {
    return name != null && NAME.matcher(name).matches();
  }

  /**
   * Whether some name a certificate can carry is {@code prefix + x + suffix} for some run {@code
   * x}, i.e. whether a pattern {@code prefix*suffix} can match any issuable peer name. Exact: if a
   * name matches with some run, it also matches with the run empty or {@code "a"}.
   *
   * @param prefix the text before the star
   * @param suffix the text after the star
   * @return true if some issuable name matches
   */
  public static boolean canMatchName(String prefix, String suffix) {
    return isName(prefix + suffix) || isName(prefix + "a" + suffix);
  }

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
