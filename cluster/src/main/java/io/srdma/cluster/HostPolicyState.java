package io.srdma.cluster;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What one host reports about the policy it runs, under {@code PREFIX/hosts/HOST/policy}.
 *
 * @param host the host's name
 * @param sha256 the SHA-256 of the policy text in force
 * @param revision the etcd revision of the pushed policy it applied (0: its local file)
 * @param applied when it was put in force
 * @param degraded whether the host was cut off from etcd when it last wrote this
 * @param refusals how many pushed policies the host refused since it started
 * @param lastRefusal the last of them, or null (none, or a host of an older version)
 */
public record HostPolicyState(
    String host,
    String sha256,
    long revision,
    Instant applied,
    boolean degraded,
    long refusals,
    PolicyRefusal lastRefusal) {
  // the refusal fields are optional: hosts of an older version write the report without them
  private static final Pattern FORM =
      Pattern.compile(
          "\\{\"host\":\"([a-z0-9_.-]{1,63})\",\"sha256\":\"([0-9a-f]{64})\",\"revision\":([0-9]{1,19}),"
              + "\"applied\":\"([0-9T:.Z-]{1,40})\",\"degraded\":(true|false)"
              + "(?:,\"refusals\":([0-9]{1,19})"
              + "(?:,\"lastRefusal\":\\{\"reason\":\"([a-z_]{1,40})\",\"serial\":([0-9]{1,19}),"
              + "\"at\":\"([0-9T:.Z-]{1,40})\"\\})?)?\\}");

  /** A report without refusals. */
  public HostPolicyState(
      String host, String sha256, long revision, Instant applied, boolean degraded) {
    this(host, sha256, revision, applied, degraded, 0, null);
  }

  /** The JSON form written to etcd. */
  public byte[] toJson() {
    return ("{\"host\":\""
            + host
            + "\",\"sha256\":\""
            + sha256
            + "\",\"revision\":"
            + revision
            + ",\"applied\":\""
            + applied
            + "\",\"degraded\":"
            + degraded
            + ",\"refusals\":"
            + refusals
            + (lastRefusal == null
                ? ""
                : ",\"lastRefusal\":{\"reason\":\""
                    + lastRefusal.reason().label()
                    + "\",\"serial\":"
                    + lastRefusal.serial()
                    + ",\"at\":\""
                    + lastRefusal.at()
                    + "\"}")
            + "}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Reads the JSON form.
   *
   * @throws ClusterException {@link ClusterException.Reason#MALFORMED} if it is not this form
   */
  public static HostPolicyState parse(byte[] json) {
    Matcher m = FORM.matcher(new String(json, StandardCharsets.UTF_8));
    if (!m.matches()) {
      throw new ClusterException(ClusterException.Reason.MALFORMED, "malformed host policy state");
    }
    try {
      return new HostPolicyState(
          m.group(1),
          m.group(2),
          Long.parseLong(m.group(3)),
          Instant.parse(m.group(4)),
          Boolean.parseBoolean(m.group(5)),
          m.group(6) == null ? 0 : Long.parseLong(m.group(6)),
          m.group(7) == null
              ? null
              : new PolicyRefusal(
                  PolicyRefusal.Reason.ofLabel(m.group(7)),
                  Long.parseLong(m.group(8)),
                  Instant.parse(m.group(9))));
    } catch (DateTimeParseException | IllegalArgumentException e) {
      throw new ClusterException(
          ClusterException.Reason.MALFORMED, "malformed host policy state", e);
    }
  }
}
