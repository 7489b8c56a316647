package io.srdma.keys;

import java.net.URI;
import java.net.URISyntaxException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Who a peer is: a tenant and a peer name within it, written {@code srdma://<tenant>/<peer>}.
 *
 * <p>An identity is only ever taken from a certificate that the deployment CA signed (see {@link
 * #fromCertificate}); never from a field a peer can choose in a message.
 *
 * <p>Names are deliberately strict so that they are safe in URIs, file names, permission strings
 * and logs: 1 to 63 characters of {@code a-z}, {@code 0-9} and {@code -}, starting and ending with
 * a letter or digit (the rules of a DNS label, lower case only).
 */
public final class PeerIdentity {
  /** The URI scheme of identities. */
  public static final String SCHEME = "srdma";

  /**
   * The tenant name reserved for region hosts: {@code srdma://host/<name>} identifies a host, which
   * acts only as TLS server; every other tenant's peers act only as TLS clients.
   */
  public static final String HOST_TENANT = "host";

  private static final Pattern NAME = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?");

  private final String tenant;
  private final String peer;

  private PeerIdentity(String tenant, String peer) {
    this.tenant = tenant;
    this.peer = peer;
  }

  /**
   * An identity from a tenant and a peer name.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if a name breaks the
   *     rules above
   */
  public static PeerIdentity of(String tenant, String peer) {
    return new PeerIdentity(checkName("tenant", tenant), checkName("peer", peer));
  }

  /**
   * The identity of a region host, {@code srdma://host/<name>}.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if {@code name}
   *     breaks the rules above
   */
  public static PeerIdentity host(String name) {
    return of(HOST_TENANT, name);
  }

  /** Whether this identity names a region host ({@code srdma://host/<name>}). */
  public boolean isHost() {
    return HOST_TENANT.equals(tenant);
  }

  /**
   * Parses {@code srdma://<tenant>/<peer>}. Nothing else is accepted: no port, user, query,
   * fragment, extra path segment or upper case.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if malformed
   */
  public static PeerIdentity parse(String uri) {
    Objects.requireNonNull(uri, "uri");
    String prefix = SCHEME + "://";
    if (!uri.startsWith(prefix)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_NAME, "identity must start with " + prefix);
    }
    String rest = uri.substring(prefix.length());
    int slash = rest.indexOf('/');
    if (slash < 0) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_NAME, "identity must be srdma://<tenant>/<peer>");
    }
    return of(rest.substring(0, slash), rest.substring(slash + 1));
  }

  /**
   * The identity in a certificate: exactly one SAN URI with scheme {@code srdma}.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#NO_IDENTITY} if there is none,
   *     more than one, or it is malformed
   */
  public static PeerIdentity fromCertificate(X509Certificate certificate) {
    Collection<List<?>> names;
    try {
      names = certificate.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.NO_IDENTITY, "subject alternative names unreadable", e);
    }
    PeerIdentity found = null;
    if (names != null) {
      for (List<?> name : names) {
        // GeneralName type 6 = uniformResourceIdentifier
        if (Integer.valueOf(6).equals(name.get(0)) && isSrdmaUri(name.get(1))) {
          if (found != null) {
            throw new KeyExchangeException(
                KeyExchangeException.Reason.NO_IDENTITY, "certificate has more than one identity");
          }
          try {
            found = parse((String) name.get(1));
          } catch (KeyExchangeException e) {
            throw new KeyExchangeException(
                KeyExchangeException.Reason.NO_IDENTITY, "certificate identity is malformed", e);
          }
        }
      }
    }
    if (found == null) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.NO_IDENTITY, "certificate has no srdma:// identity");
    }
    return found;
  }

  private static boolean isSrdmaUri(Object value) {
    if (!(value instanceof String s)) {
      return false;
    }
    try {
      return SCHEME.equalsIgnoreCase(new URI(s).getScheme());
    } catch (URISyntaxException e) {
      return s.regionMatches(true, 0, SCHEME + ":", 0, SCHEME.length() + 1);
    }
  }

  /**
   * Checks one tenant or peer name.
   *
   * @param what what the name is, for the error message
   * @param name the name
   * @return {@code name}
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if it breaks the
   *     rules
   */
  public static String checkName(String what, String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_NAME,
          what
              + " name must be 1-63 characters of a-z, 0-9 and '-', starting and ending with a"
              + " letter or digit"
              + (name == null ? "" : " (got " + printable(name) + ")"));
    }
    return name;
  }

  /** Quotes a rejected name with control and non-ASCII characters escaped, so logs stay clean. */
  static String printable(String s) {
    StringBuilder b = new StringBuilder("\"");
    int max = Math.min(s.length(), 80);
    for (int i = 0; i < max; i++) {
      char c = s.charAt(i);
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        b.append(c);
      } else {
        b.append(String.format("\\u%04x", (int) c));
      }
    }
    return b.append(s.length() > max ? "...\"" : "\"").toString();
  }

  /** The tenant name. */
  public String tenant() {
    return tenant;
  }

  /** The peer name within the tenant. */
  public String peer() {
    return peer;
  }

  /** {@code srdma://<tenant>/<peer>}. */
  public String toUri() {
    return SCHEME + "://" + tenant + "/" + peer;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PeerIdentity other
        && tenant.equals(other.tenant)
        && peer.equals(other.peer);
  }

  @Override
  public int hashCode() {
    return tenant.hashCode() * 31 + peer.hashCode();
  }

  @Override
  public String toString() {
    return toUri();
  }
}
