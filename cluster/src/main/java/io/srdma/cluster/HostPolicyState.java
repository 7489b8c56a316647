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
 */
public record HostPolicyState(
    String host, String sha256, long revision, Instant applied, boolean degraded) {
  private static final Pattern FORM =
      Pattern.compile(
          "\\{\"host\":\"([a-z0-9_.-]{1,63})\",\"sha256\":\"([0-9a-f]{64})\",\"revision\":([0-9]{1,19}),"
              + "\"applied\":\"([0-9T:.Z-]{1,40})\",\"degraded\":(true|false)\\}");

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
          Boolean.parseBoolean(m.group(5)));
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new ClusterException(
          ClusterException.Reason.MALFORMED, "malformed host policy state", e);
    }
  }
}
