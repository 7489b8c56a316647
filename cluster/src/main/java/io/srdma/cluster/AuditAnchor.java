package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.srdma.policy.AuditKey;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import io.srdma.policy.PolicyException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A host's audit chain head as anchored in etcd ({@code PREFIX/hosts/HOST/audit-head}): the
 * sequence number and MAC of the last line its audit log had written when it published. {@code
 * srdma audit verify --cluster} checks that this line is in the chain given to it, so a log cut or
 * rewritten after the anchor shows even to someone who could rewrite every file on the host.
 *
 * <p>A host never anchors over a line its log no longer holds: before its first anchor after start
 * (and whenever the key changed under it) it checks that the anchored line, that sequence number
 * with that MAC, is in its chain ({@link Chain}); if it is not, it keeps the anchor, says so, and
 * anchors nothing until an operator drops it ({@link #reset}). Each anchor replaces the one the
 * host last read or wrote (compare-and-swap on the key's revision).
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

  /** An anchor as stored, with the key's modification revision (for compare-and-swap). */
  record Stored(AuditAnchor anchor, long modRevision) {}

  /** The anchor with its revision, or null if there is none. */
  static Stored readStored(EtcdLink link, String host) {
    GetResponse r =
        link.await(
            link.client().getKVClient().get(link.keys().auditHead(host)),
            "reading the audit anchor of " + host);
    if (r.getKvs().isEmpty()) {
      return null;
    }
    return new Stored(
        parse(r.getKvs().get(0).getValue().getBytes()), r.getKvs().get(0).getModRevision());
  }

  /** The record of the last operator reset of a host's anchor (raw text), or null if none. */
  static String readReset(EtcdLink link, String host) {
    GetResponse r =
        link.await(
            link.client().getKVClient().get(link.keys().auditReset(host)),
            "reading the audit anchor reset of " + host);
    return r.getKvs().isEmpty()
        ? null
        : r.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8);
  }

  private static final Pattern REASON = Pattern.compile("[ !#-\\[\\]-~]{1,200}");

  /**
   * Drops a host's anchor after a human decision ({@code srdma cluster audit-reset}): the anchor is
   * moved to {@code PREFIX/hosts/HOST/audit-reset} with the time and the reason, in one transaction
   * that fails if the anchor changed since it was read. The host, which kept the anchor because its
   * log no longer holds the anchored line, then records the reset in its audit log and anchors its
   * current head.
   *
   * @param link the operator's link
   * @param host the host
   * @param expectedSeq the sequence number of the anchor being dropped, as the operator saw it
   * @param reason why (printable ASCII without quotes or backslashes, at most 200 characters)
   * @param now the time recorded
   * @return the anchor dropped
   * @throws ClusterException {@code REFUSED} if there is no anchor, it is not at {@code
   *     expectedSeq} or the reason is malformed; {@code CONFLICT} if it changed meanwhile; {@code
   *     UNAVAILABLE} if etcd does not answer
   */
  public static AuditAnchor reset(
      EtcdLink link, String host, long expectedSeq, String reason, Instant now) {
    if (reason == null || !REASON.matcher(reason).matches()) {
      throw new ClusterException(
          ClusterException.Reason.REFUSED,
          "the reason must be 1 to 200 printable ASCII characters without quotes or backslashes");
    }
    Stored s = readStored(link, host);
    if (s == null) {
      throw new ClusterException(
          ClusterException.Reason.REFUSED, "host " + host + " has no audit anchor to reset");
    }
    if (s.anchor().seq() != expectedSeq) {
      throw new ClusterException(
          ClusterException.Reason.REFUSED,
          "the audit anchor of "
              + host
              + " is seq "
              + s.anchor().seq()
              + ", not "
              + expectedSeq
              + ": nothing reset (look at it again)");
    }
    AuditAnchor a = s.anchor();
    byte[] record =
        ("{\"host\":\""
                + a.host()
                + "\",\"seq\":"
                + a.seq()
                + ",\"mac\":\""
                + a.mac()
                + "\",\"at\":\""
                + a.at()
                + "\",\"reset\":\""
                + now
                + "\",\"reason\":\""
                + reason
                + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    ByteSequence key = link.keys().auditHead(host);
    TxnResponse r =
        link.await(
            link.client()
                .getKVClient()
                .txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(s.modRevision())))
                .Then(
                    Op.put(
                        link.keys().auditReset(host), ByteSequence.from(record), PutOption.DEFAULT),
                    Op.delete(key, DeleteOption.DEFAULT))
                .commit(),
            "resetting the audit anchor of " + host);
    if (!r.isSucceeded()) {
      throw new ClusterException(
          ClusterException.Reason.CONFLICT,
          "the audit anchor of " + host + " changed meanwhile: nothing reset (look at it again)");
    }
    return a;
  }

  /** Told by the node of a kept (mismatched) anchor and of an operator's reset, to audit them. */
  public interface Listener {
    /**
     * The anchor in etcd names a line the host's chain does not hold (cut or replaced while the
     * host was down, or another process claims the host); it is kept and nothing is anchored.
     *
     * @param kept the anchor
     * @param problem why the chain does not hold it
     */
    void mismatch(AuditAnchor kept, String problem);

    /**
     * An operator dropped the host's anchor ({@link #reset}); the current head is anchored next. A
     * failure is retried at the next round, before anything is anchored.
     *
     * @param dropped the anchor this node had kept, or null if it found none (reset while it was
     *     down)
     * @param record the reset record in etcd (JSON, with the dropped anchor, time and reason), or
     *     null if none
     */
    void reset(AuditAnchor dropped, String record);
  }

  /** Whether a host's audit chain still holds a line. */
  @FunctionalInterface
  public interface Chain {
    /**
     * Checks the chain.
     *
     * @param seq the line's sequence number
     * @param mac the line's MAC
     * @return null if the chain holds line {@code seq} with MAC {@code mac} (compared in constant
     *     time), else why not, in a few words
     * @throws RuntimeException if the chain could not be read (tried again later)
     */
    String missing(long seq, String mac);
  }

  /**
   * The chain of a live audit log keyed by {@code audit.key} beside it ({@link
   * AuditKey#defaultFile}), as {@link #chainOf(Path, Path)}.
   */
  public static Chain chainOf(AuditLog log) {
    return chainOf(log.file(), AuditKey.defaultFile(log.file()));
  }

  /**
   * The chain of the audit log {@code active} (and its rotated files beside it), checked read-only
   * with the audit key in {@code keyFile}: the rotated file that should hold the line (by its name)
   * and every later file are verified as {@code srdma audit verify --key KEY --head SEQ:MAC} does
   * (every MAC and chain link up to the current head), so the line must be in the chain the log
   * continues, not merely in some file.
   */
  public static Chain chainOf(Path active, Path keyFile) {
    return (seq, mac) -> {
      AuditVerification v = null;
      // the log is live: a line being written may show as a partial last line; look again
      for (int attempt = 0; attempt < 3; attempt++) {
        List<Path> files = filesHolding(active, seq);
        if (files.isEmpty()) {
          return "no audit log files";
        }
        try (AuditKey key = AuditKey.load(keyFile)) {
          v = new AuditVerifier(key, null).verify(files, new AuditVerifier.Head(seq, mac), false);
        }
        if (v.intact()) {
          return null;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new PolicyException(
              PolicyException.Category.ILLEGAL_ARGUMENT, "interrupted checking the audit chain");
        }
      }
      return v.summary();
    };
  }

  /**
   * The rotated file whose name says it holds {@code seq}, every later one, and the active file.
   */
  static List<Path> filesHolding(Path active, long seq) {
    Path dir = active.toAbsolutePath().getParent();
    Pattern p = Pattern.compile(Pattern.quote(active.getFileName().toString()) + "\\.([0-9]{12})");
    TreeMap<Long, Path> rotated = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.forEach(
          f -> {
            Matcher m = p.matcher(f.getFileName().toString());
            if (m.matches()) {
              rotated.put(Long.parseLong(m.group(1)), f);
            }
          });
    } catch (IOException e) {
      throw new ClusterException(
          ClusterException.Reason.MALFORMED, "cannot list the audit log directory " + dir, e);
    }
    Long from = rotated.floorKey(seq);
    List<Path> out =
        new ArrayList<>(from == null ? rotated.values() : rotated.tailMap(from, true).values());
    if (Files.exists(active)) {
      out.add(active);
    }
    return out;
  }
}
