package io.srdma.cluster;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One live grant as the deployment sees it, the value of {@code PREFIX/grants/HOST/ID} (held by a
 * lease whose TTL is the grant's remaining life).
 *
 * @param host the host that issued it
 * @param grantId the host's grant id
 * @param tenant the tenant
 * @param peer the holder's identity ({@code srdma://tenant/peer})
 * @param region the region
 * @param offset first granted byte
 * @param length granted bytes
 * @param ops granted operations, comma-separated, lower case
 * @param expiresAt when it expires
 */
public record ClusterGrant(
    String host,
    long grantId,
    String tenant,
    String peer,
    String region,
    long offset,
    long length,
    String ops,
    Instant expiresAt) {
  // every text field is a name or an identity URI of the deployment: no quotes, no backslashes
  private static final String TEXT = "([A-Za-z0-9_.:/@+-]{1,300})";
  private static final Pattern FORM =
      Pattern.compile(
          "\\{\"host\":\""
              + TEXT
              + "\",\"id\":([0-9]{1,19}),\"tenant\":\""
              + TEXT
              + "\",\"peer\":\""
              + TEXT
              + "\",\"region\":\""
              + TEXT
              + "\",\"offset\":([0-9]{1,19}),\"length\":([0-9]{1,19}),\"ops\":\"([a-z,_]{0,100})\","
              + "\"expires\":\"([0-9T:.Z-]{1,40})\"\\}");
  private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9_.:/@+-]{1,300}");

  /** Checks the text fields (they are written into JSON without escaping). */
  public ClusterGrant {
    for (String s : new String[] {host, tenant, peer, region}) {
      if (s == null || !SAFE.matcher(s).matches()) {
        throw new IllegalArgumentException("not a name or identity: " + s);
      }
    }
    if (ops == null || !ops.matches("[a-z,_]{0,100}")) {
      throw new IllegalArgumentException("bad operations: " + ops);
    }
  }

  /** The JSON form written to etcd. */
  public byte[] toJson() {
    return ("{\"host\":\""
            + host
            + "\",\"id\":"
            + grantId
            + ",\"tenant\":\""
            + tenant
            + "\",\"peer\":\""
            + peer
            + "\",\"region\":\""
            + region
            + "\",\"offset\":"
            + offset
            + ",\"length\":"
            + length
            + ",\"ops\":\""
            + ops
            + "\",\"expires\":\""
            + expiresAt
            + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Reads the JSON form.
   *
   * @throws ClusterException {@link ClusterException.Reason#MALFORMED} if it is not this form
   */
  public static ClusterGrant parse(byte[] json) {
    Matcher m = FORM.matcher(new String(json, StandardCharsets.UTF_8));
    if (!m.matches()) {
      throw new ClusterException(ClusterException.Reason.MALFORMED, "malformed grant entry");
    }
    try {
      return new ClusterGrant(
          m.group(1),
          Long.parseLong(m.group(2)),
          m.group(3),
          m.group(4),
          m.group(5),
          Long.parseLong(m.group(6)),
          Long.parseLong(m.group(7)),
          m.group(8),
          Instant.parse(m.group(9)));
    } catch (DateTimeParseException | IllegalArgumentException e) {
      throw new ClusterException(ClusterException.Reason.MALFORMED, "malformed grant entry", e);
    }
  }
}
