package io.srdma.cluster;

import io.etcd.jetcd.kv.GetResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A host's audit chain head as anchored in etcd ({@code PREFIX/hosts/HOST/audit-head}): the
 * sequence number and MAC of the last line its audit log had written when it published. {@code
 * srdma audit verify --cluster} checks that this line is in the chain given to it, so a log cut or
 * rewritten after the anchor shows even to someone who could rewrite every file on the host.
 *
 * @param host the host
 * @param seq the line's sequence number
 * @param mac the line's MAC, 64 hex digits
 * @param at when the host published it
 */
public record AuditAnchor(String host, long seq, String mac, Instant at) {
  private static final Pattern FORM =
      Pattern.compile(
          "\\{\"host\":\"([a-z0-9_.-]{1,63})\",\"seq\":([0-9]{1,18}),\"mac\":\"([0-9a-f]{64})\","
              + "\"at\":\"([0-9T:.Z-]{1,40})\"\\}");

  /** As {@code srdma audit verify --head} takes it: {@code SEQ:MAC}. */
  public String head() {
    return seq + ":" + mac;
  }

  byte[] toJson() {
    return ("{\"host\":\""
            + host
            + "\",\"seq\":"
            + seq
            + ",\"mac\":\""
            + mac
            + "\",\"at\":\""
            + at
            + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  static AuditAnchor parse(byte[] json) {
    Matcher m = FORM.matcher(new String(json, StandardCharsets.UTF_8));
    if (!m.matches()) {
      throw new ClusterException(ClusterException.Reason.MALFORMED, "malformed audit anchor");
    }
    try {
      return new AuditAnchor(
          m.group(1), Long.parseLong(m.group(2)), m.group(3), Instant.parse(m.group(4)));
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new ClusterException(ClusterException.Reason.MALFORMED, "malformed audit anchor", e);
    }
  }

  /**
   * The anchor a host last published.
   *
   * @return the anchor, or null if the host never published one
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer, {@code MALFORMED} if the
   *     entry is not an anchor
   */
  public static AuditAnchor read(EtcdLink link, String host) {
    GetResponse r =
        link.retryOnce(
            () ->
                link.await(
                    link.client().getKVClient().get(link.keys().auditHead(host)),
                    "reading the audit anchor of " + host));
    return r.getKvs().isEmpty() ? null : parse(r.getKvs().get(0).getValue().getBytes());
  }

  /** A consistent (seq, MAC) pair of a live audit log. */
  public record Head(long seq, String mac) {}

  /**
   * The head of a live audit log, for {@link ClusterNode.Options#auditHead}: the sequence number is
   * read before and after the MAC, so the pair belongs together (null if a line was written in
   * between; the next round tries again).
   */
  public static java.util.function.Supplier<Head> headOf(io.srdma.policy.AuditLog log) {
    return () -> {
      long before = log.sequence();
      String mac = log.head();
      long after = log.sequence();
      return before == after && mac != null ? new Head(before, mac) : null;
    };
  }
}
