package io.srdma.policy;

import java.util.Objects;

/**
 * Writes the audit lines of this module's events in one consistent shape: the calls the channel and
 * the console make at each security-relevant step. Each method returns the new chain head.
 *
 * <p>Order matters: call {@link #granted} before the grant takes effect (before its R_Key is sent)
 * and {@link #revoked} once it stopped taking effect (after its window is invalidated: a revocation
 * is never delayed or prevented by the audit log); both are forced to disk before they return.
 */
public final class AuditTrail {
  /** The actor of events nobody in particular caused (expiry, file watch). */
  public static final String SYSTEM = "system";

  private final AuditLog log;

  /**
   * A trail writing to a log. The caller keeps ownership of the log and closes it.
   *
   * @param log the audit log
   */
  public AuditTrail(AuditLog log) {
    this.log = Objects.requireNonNull(log, "log");
  }

  /**
   * A peer's TLS authentication.
   *
   * @param identity the certificate identity, or null if none was presented
   * @param tenant its tenant, or null
   * @param ok whether it succeeded
   * @param reason a short code, e.g. {@code foreign_ca}, {@code expired}, {@code ok}
   * @return the new head
   */
  public String peerAuthenticated(String identity, String tenant, boolean ok, String reason) {
    return log.append(
        AuditEvent.builder(
                AuditAction.AUTHENTICATE, ok ? AuditOutcome.SUCCESS : AuditOutcome.FAILURE)
            .actor(identity)
            .tenant(tenant)
            .reason(reason)
            .build());
  }

  /**
   * A console login; records the user and outcome, never the password.
   *
   * @param result what {@link ConsoleUsers#authenticate} returned
   * @param remote the client address, or null
   * @return the new head
   */
  public String consoleLogin(ConsoleAuthResult result, String remote) {
    AuditEvent.Builder b =
        AuditEvent.builder(
                AuditAction.AUTHENTICATE,
                result.succeeded() ? AuditOutcome.SUCCESS : AuditOutcome.FAILURE)
            .actor(result.user())
            .reason(result.succeeded() ? "ok" : result.failure().name())
            .detail("console" + (remote == null ? "" : " from " + remote));
    return log.append(b.build());
  }

  /**
   * A console logout, in the login's shape ({@link #consoleLogin}): action {@code authenticate},
   * outcome {@code success}, the user as actor, reason {@code logout}; never the session's cookie
   * or CSRF token.
   *
   * @param user the console user whose session ended
   * @param remote the client address, or null
   * @return the new head
   */
  public String consoleLogout(String user, String remote) {
    return log.append(
        AuditEvent.builder(AuditAction.AUTHENTICATE, AuditOutcome.SUCCESS)
            .actor(Objects.requireNonNull(user, "user"))
            .reason("logout")
            .detail("console" + (remote == null ? "" : " from " + remote))
            .build());
  }

  /**
   * A decision that will not become a grant (a denial, or a dry run such as policy explain).
   *
   * @param d the decision
   * @return the new head
   */
  public String decided(Decision d) {
    return log.append(AuditEvent.of(AuditAction.DECIDE, d).build());
  }

  /**
   * A grant about to take effect; forced to disk before this returns. Log denials with {@link
   * #decided}.
   *
   * @param d the allowing decision
   * @param grantId the grant id (never its rkey)
   * @return the new head
   */
  public String granted(Decision d, String grantId) {
    if (!d.allowed()) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT, "not an allowing decision: " + d.reason());
    }
    return log.append(AuditEvent.of(AuditAction.GRANT, d).grant(grantId).build());
  }

  /**
   * A grant revoked (its window already invalidated); forced to disk before this returns.
   *
   * @param grant the grant
   * @param actor who revokes: a console user, {@link #SYSTEM}
   * @param reason why: {@code expired}, {@code console}, {@code policy:NOT_PERMITTED}, {@code
   *     session_closed}
   * @return the new head
   */
  public String revoked(LiveGrant grant, String actor, String reason) {
    return log.append(
        AuditEvent.builder(AuditAction.REVOKE, AuditOutcome.SUCCESS)
            .actor(actor)
            .tenant(grant.tenant())
            .reason(reason)
            .peer(grant.identity())
            .region(grant.region())
            .grant(grant.id())
            .range(grant.offset(), grant.length())
            .operations(grant.operations())
            .build());
  }

  /**
   * A revocation asked for that did not happen, or is not known to have happened (the grant had
   * already ended, or the host could not be reached or did not confirm): {@code revoke} with
   * outcome {@code failure}, so that a {@code revoke}/{@code success} line always means revoked.
   *
   * @param grant the grant as it was listed
   * @param actor who asked: a console user
   * @param reason why it was asked, as for {@link #revoked}, e.g. {@code console}
   * @param detail what went wrong, for people
   * @return the new head
   */
  public String revokeFailed(LiveGrant grant, String actor, String reason, String detail) {
    return log.append(
        AuditEvent.builder(AuditAction.REVOKE, AuditOutcome.FAILURE)
            .actor(actor)
            .tenant(grant.tenant())
            .reason(reason)
            .peer(grant.identity())
            .region(grant.region())
            .grant(grant.id())
            .range(grant.offset(), grant.length())
            .operations(grant.operations())
            .detail(detail)
            .build());
  }

  /**
   * A policy now in force.
   *
   * @param r the reload result
   * @param actor who reloaded: a console user, {@link #SYSTEM} for the file watch
   * @return the new head
   */
  public String reloaded(ReloadResult r, String actor) {
    return log.append(
        AuditEvent.builder(AuditAction.RELOAD, AuditOutcome.SUCCESS)
            .actor(actor)
            .reason(r.forbidden().isEmpty() ? "ok" : "forbids_live_grants")
            .policy(r.current().sha256())
            .detail(
                r.current().source()
                    + " replaces "
                    + r.previous().sha256()
                    + "; live grants now forbidden: "
                    + r.forbidden().size())
            .build());
  }

  /**
   * A policy reload refused; the old policy stays.
   *
   * @param error why
   * @param actor who tried
   * @return the new head
   */
  public String reloadRejected(PolicyException error, String actor) {
    String detail =
        error instanceof PolicyRejectedException r
            ? r.errors().size() + " errors, first: " + r.errors().get(0)
            : error.getMessage();
    return log.append(
        AuditEvent.builder(AuditAction.RELOAD, AuditOutcome.FAILURE)
            .actor(actor)
            .reason(error.category().name())
            .detail(detail)
            .build());
  }

  /**
   * An access outside a peer's grants (remote access error, bad record, unknown rkey).
   *
   * @param identity the peer
   * @param tenant its tenant
   * @param region the region touched, or null
   * @param offset the offset tried
   * @param length the length tried
   * @param reason a short code, e.g. {@code rem_access_err}, {@code bad_tag}
   * @return the new head
   */
  public String accessViolation(
      String identity, String tenant, String region, long offset, long length, String reason) {
    return log.append(
        AuditEvent.builder(AuditAction.ACCESS_VIOLATION, AuditOutcome.DENIED)
            .actor(identity)
            .tenant(tenant)
            .reason(reason)
            .region(region)
            .range(offset, length)
            .build());
  }

  /**
   * The audit anchor kept in the cluster names a line this log no longer holds (cut or replaced
   * while the host was down): the host keeps that anchor and does not anchor its head over it.
   *
   * @param seq the anchored line's sequence number
   * @param mac the anchored line's MAC
   * @param problem why it is not in the chain
   * @return the new head
   */
  public String anchorMismatch(long seq, String mac, String problem) {
    return log.append(
        AuditEvent.builder(AuditAction.ANCHOR, AuditOutcome.FAILURE)
            .actor(SYSTEM)
            .reason("anchored-line-missing")
            .detail("anchored seq " + seq + " mac " + mac + ": " + problem)
            .build());
  }

  /**
   * An operator reset the host's audit anchor (after a mismatch): the anchor the host publishes
   * next replaces the one recorded here.
   *
   * @param seq the dropped anchor's sequence number (0 if not known)
   * @param mac the dropped anchor's MAC, or null if not known
   * @param detail who reset it, when, and why, as recorded in etcd
   * @return the new head
   */
  public String anchorReset(long seq, String mac, String detail) {
    return log.append(
        AuditEvent.builder(AuditAction.ANCHOR, AuditOutcome.SUCCESS)
            .actor(SYSTEM)
            .reason("anchor-reset")
            .detail("dropped anchor seq " + seq + " mac " + mac + "; " + detail)
            .build());
  }
}
