package io.srdma.policy;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One parsed audit line: the fields the chain needs. Every line is
 *
 * <pre>
 * {"seq":N,"prev":"&lt;mac of line N-1&gt;","time":"...","action":"...",...,"mac":"&lt;64 hex&gt;"}
 * </pre>
 *
 * where {@code mac} = HMAC-SHA256(audit key, the line's bytes before {@code ,"mac":}). Genesis and
 * checkpoint lines have fixed layouts, matched whole.
 */
final class AuditLine {
  static final String MAC_FIELD = ",\"mac\":\"";

  /**
   * The longest line read, in bytes without its newline. The log writes lines under 64 KiB (eight
   * text fields of at most 1,024 characters, each escaped to at most 6 bytes; a checkpoint's
   * certificate of at most 16 KiB); a longer line is not a record, and is never held whole.
   */
  static final int MAX_BYTES = 1 << 20;

  /** Length of {@code ,"mac":"<64 hex>"}}. */
  static final int MAC_SUFFIX = MAC_FIELD.length() + 64 + 2;

  private static final String HEX = "[0-9a-f]{64}";
  private static final Pattern LINE =
      Pattern.compile(
          "^\\{\"seq\":([1-9][0-9]{0,17}),\"prev\":\"("
              + HEX
              + ")\",\"time\":\"([0-9A-Za-z:.+-]{1,40})\",\"action\":\"([a-z_]{1,40})\",.*,\"mac\":\"("
              + HEX
              + ")\"\\}$");
  private static final String SYSTEM_HEAD =
      ",\"action\":\"%s\",\"outcome\":\"success\",\"actor\":\"system\",\"tenant\":null,\"reason\":\"";
  static final Pattern GENESIS =
      Pattern.compile(
          "^\\{\"seq\":[0-9]+,\"prev\":\"[0-9a-f]{64}\",\"time\":\"[^\"]*\""
              + Pattern.quote(String.format(SYSTEM_HEAD, "genesis"))
              + "(new|restarted|rotated|continued)\",\"key_id\":\"([0-9a-f]{16})\""
              + Pattern.quote(MAC_FIELD)
              + HEX
              + "\"\\}$");
  static final Pattern CHECKPOINT =
      Pattern.compile(
          "^\\{\"seq\":[0-9]+,\"prev\":\"[0-9a-f]{64}\",\"time\":\"[^\"]*\""
              + Pattern.quote(String.format(SYSTEM_HEAD, "checkpoint"))
              + "(interval|rotate|close)\",\"from\":([1-9][0-9]{0,17}),\"lines_sha256\":\"("
              + HEX
              + ")\",\"cert\":\"([A-Za-z0-9+/=]{1,16384})\"(,\"sig\":\"([A-Za-z0-9+/=]{1,1024})\")"
              + Pattern.quote(MAC_FIELD)
              + HEX
              + "\"\\}$");

  final String raw;
  final long seq;
  final String prev;
  final String time;
  final String action;
  final String mac;

  private AuditLine(String raw, Matcher m) {
    this.raw = raw;
    this.seq = Long.parseLong(m.group(1));
    this.prev = m.group(2);
    this.time = m.group(3);
    this.action = m.group(4);
    this.mac = m.group(5);
  }

  /** The line, or null if it is not an audit record of this format. */
  static AuditLine parse(String raw) {
    Matcher m = LINE.matcher(raw);
    return m.matches() ? new AuditLine(raw, m) : null;
  }

  /** The bytes the MAC covers: the line before {@code ,"mac":}. */
  String macInput() {
    return raw.substring(0, raw.length() - MAC_SUFFIX);
  }

  boolean isGenesis() {
    return "genesis".equals(action);
  }

  boolean isCheckpoint() {
    return "checkpoint".equals(action);
  }

  /** The opening of a genesis or checkpoint line, up to and including {@code "reason":"}. */
  static String systemHead(long seq, String prev, String time, String action) {
    return "{\"seq\":"
        + seq
        + ",\"prev\":\""
        + prev
        + "\",\"time\":\""
        + time
        + "\""
        + String.format(SYSTEM_HEAD, action);
  }
}
