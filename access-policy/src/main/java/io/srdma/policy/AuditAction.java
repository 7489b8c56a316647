package io.srdma.policy;

import java.util.Locale;

/** What an audit line records. */
public enum AuditAction {
  /** A peer or console user authenticated, or failed to. */
  AUTHENTICATE(false),
  /** A grant request was decided. */
  DECIDE(false),
  /** A grant is about to take effect. Forced to disk before {@code append} returns. */
  GRANT(true),
  /** A grant is about to be revoked. Forced to disk before {@code append} returns. */
  REVOKE(true),
  /** A policy reload succeeded or was rejected. */
  RELOAD(false),
  /** A peer tried to access memory outside its grants. */
  ACCESS_VIOLATION(false),
  /**
   * The host's audit anchor in the cluster's etcd: held back because the log no longer holds the
   * anchored line (failure), or moved by an operator's reset (success). Forced to disk.
   */
  ANCHOR(true),
  /**
   * The first line of every audit file, written by the log itself: names the previous file's last
   * MAC and the audit key's id. Always forced to disk.
   */
  GENESIS(false),
  /**
   * A checkpoint signed with the host's certificate key, written by the log itself. Always forced
   * to disk.
   */
  CHECKPOINT(false);

  private final boolean durable;
  private final String token = name().toLowerCase(Locale.ROOT);

  AuditAction(boolean durable) {
    this.durable = durable;
  }

  /** Whether a line of this action is forced to stable storage before {@code append} returns. */
  public boolean durable() {
    return durable;
  }

  /** The name written in the log, e.g. {@code access_violation}. */
  public String token() {
    return token;
  }
}
