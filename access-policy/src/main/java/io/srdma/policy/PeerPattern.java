package io.srdma.policy;

/**
 * A peer identity ({@code srdma://acme/trainer-1}) or pattern with one {@code *} in the peer part
 * ({@code srdma://acme/trainer-*}). The star matches any run of characters, including none.
 */
public final class PeerPattern {
  private final String text;
  private final String prefix;
  private final String suffix;
  private final boolean wildcard;

  private PeerPattern(String text) {
    this.text = text;
    int star = text.indexOf('*');
    this.wildcard = star >= 0;
    this.prefix = wildcard ? text.substring(0, star) : text;
    this.suffix = wildcard ? text.substring(star + 1) : "";
  }

  /**
   * Compiles a pattern; the caller has validated it holds at most one star.
   *
   * @param text identity or pattern
   * @return the pattern
   */
  static PeerPattern of(String text) {
    return new PeerPattern(text);
  }

  /** The text before the star (the whole identity if there is none). */
  String prefix() {
    return prefix;
  }

  /** The text after the star (empty if there is none). */
  String suffix() {
    return suffix;
  }

  /** The pattern as written. */
  public String text() {
    return text;
  }

  /** Whether this is a pattern rather than one exact identity. */
  public boolean isWildcard() {
    return wildcard;
  }

  /**
   * Whether an identity matches.
   *
   * @param identity a peer identity
   * @return true if the identity matches this pattern
   */
  public boolean matches(String identity) {
    if (!wildcard) {
      return text.equals(identity);
    }
    return identity.length() >= prefix.length() + suffix.length()
        && identity.startsWith(prefix)
        && identity.endsWith(suffix);
  }

  /**
   * Whether some identity matches both patterns. For single-star patterns that is exactly: one
   * prefix starts the other and one suffix ends the other (a long enough middle fits both).
   */
  boolean overlaps(PeerPattern other) {
    if (!wildcard || !other.wildcard) {
      return wildcard ? matches(other.text) : other.matches(text);
    }
    boolean prefixes = prefix.startsWith(other.prefix) || other.prefix.startsWith(prefix);
    boolean suffixes = suffix.endsWith(other.suffix) || other.suffix.endsWith(suffix);
    return prefixes && suffixes;
  }

  @Override
  public String toString() {
    return text;
  }
}
