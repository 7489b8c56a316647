package io.srdma.policy;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One auditable event. Every field is a name, a number or a short text: the builder takes no key
 * material, no password and no rkey, so none can reach the log. Refer to grants by their id.
 *
 * <p>Text fields are cut to {@value #MAX_FIELD_CHARS} characters.
 */
public final class AuditEvent {
  /** Longest text kept per field. */
  public static final int MAX_FIELD_CHARS = 1024;

  private final AuditAction action;
  private final AuditOutcome outcome;
  private final String actor;
  private final String tenant;
  private final String reason;
  private final String peer;
  private final String region;
  private final String grant;
  private final long offset;
  private final long length;
  private final String operations;
  private final Duration ttl;
  private final String policy;
  private final String detail;

  private AuditEvent(Builder b) {
    action = b.action;
    outcome = b.outcome;
    actor = b.actor;
    tenant = b.tenant;
    reason = b.reason;
    peer = b.peer;
    region = b.region;
    grant = b.grant;
    offset = b.offset;
    length = b.length;
    operations = b.operations;
    ttl = b.ttl;
    policy = b.policy;
    detail = b.detail;
  }

  /**
   * Starts an event.
   *
   * @param action what happened
   * @param outcome how it turned out
   * @return a builder
   */
  public static Builder builder(AuditAction action, AuditOutcome outcome) {
    return new Builder(action, outcome);
  }

  /**
   * An event for a decision: actor = the peer, reason = the decision code, the role and permission
   * that decided in the detail.
   *
   * @param action usually {@link AuditAction#DECIDE}, {@link AuditAction#GRANT}
   * @param d the decision
   * @return a builder, to add e.g. the grant id
   */
  public static Builder of(AuditAction action, Decision d) {
    Builder b =
        builder(action, d.allowed() ? AuditOutcome.ALLOWED : AuditOutcome.DENIED)
            .actor(d.identity())
            .tenant(d.tenant())
            .reason(d.reason().name())
            .region(d.region())
            .range(d.offset(), d.length())
            .operations(d.operations())
            .policy(d.policySha256())
            .detail(d.explain());
    if (d.effectiveTtl() != null) {
      b.ttl(d.effectiveTtl());
    }
    return b;
  }

  /** The action. */
  public AuditAction action() {
    return action;
  }

  /** The outcome. */
  public AuditOutcome outcome() {
    return outcome;
  }

  /** Renders the fields after {@code seq}, {@code prev} and {@code time}, without braces. */
  void appendFields(StringBuilder b) {
    field(b, "action", action.token());
    field(b, "outcome", outcome.token());
    field(b, "actor", actor);
    field(b, "tenant", tenant);
    field(b, "reason", reason);
    if (peer != null) {
      field(b, "peer", peer);
    }
    if (region != null) {
      field(b, "region", region);
    }
    if (grant != null) {
      field(b, "grant", grant);
    }
    if (length >= 0) {
      b.append(",\"offset\":").append(offset).append(",\"length\":").append(length);
    }
    if (operations != null) {
      field(b, "ops", operations);
    }
    if (ttl != null) {
      b.append(",\"ttl_ms\":").append(ttl.toMillis());
    }
    if (policy != null) {
      field(b, "policy", policy);
    }
    if (detail != null) {
      field(b, "detail", detail);
    }
  }

  private static void field(StringBuilder b, String name, String value) {
    b.append(",\"").append(name).append("\":");
    if (value == null) {
      b.append("null");
    } else {
      Json.string(b, value);
    }
  }

  /** Builds an {@link AuditEvent}. Not thread-safe. */
  public static final class Builder {
    private final AuditAction action;
    private final AuditOutcome outcome;
    private String actor;
    private String tenant;
    private String reason;
    private String peer;
    private String region;
    private String grant;
    private long offset = -1;
    private long length = -1;
    private String operations;
    private Duration ttl;
    private String policy;
    private String detail;

    private Builder(AuditAction action, AuditOutcome outcome) {
      this.action = Objects.requireNonNull(action, "action");
      this.outcome = Objects.requireNonNull(outcome, "outcome");
    }

    /** Who acted: a peer identity, a console user, {@code system}. */
    public Builder actor(String actor) {
      this.actor = cut(actor);
      return this;
    }

    /** The tenant concerned. */
    public Builder tenant(String tenant) {
      this.tenant = cut(tenant);
      return this;
    }

    /** A reason code, e.g. a {@link DecisionReason} name or {@code expired}. */
    public Builder reason(String reason) {
      this.reason = cut(reason);
      return this;
    }

    /** The peer acted upon, when not the actor (e.g. an admin revoking a peer's grant). */
    public Builder peer(String peer) {
      this.peer = cut(peer);
      return this;
    }

    /** The region concerned. */
    public Builder region(String region) {
      this.region = cut(region);
      return this;
    }

    /** The grant id (never its rkey). */
    public Builder grant(String grantId) {
      this.grant = cut(grantId);
      return this;
    }

    /** The byte range concerned. */
    public Builder range(long offset, long length) {
      this.offset = offset;
      this.length = Math.max(length, 0);
      return this;
    }

    /** The operations concerned. */
    public Builder operations(Set<Operation> ops) {
      this.operations =
          ops.stream().sorted().map(Operation::token).collect(Collectors.joining(","));
      return this;
    }

    /** The lifetime granted. */
    public Builder ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    /** The SHA-256 of the policy concerned. */
    public Builder policy(String sha256) {
      this.policy = cut(sha256);
      return this;
    }

    /** Free text for people. Never put secrets here. */
    public Builder detail(String detail) {
      this.detail = cut(detail);
      return this;
    }

    /** The event. */
    public AuditEvent build() {
      return new AuditEvent(this);
    }

    private static String cut(String s) {
      return s == null || s.length() <= MAX_FIELD_CHARS ? s : s.substring(0, MAX_FIELD_CHARS);
    }
  }
}
