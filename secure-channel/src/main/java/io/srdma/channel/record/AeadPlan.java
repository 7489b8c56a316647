package io.srdma.channel.record;

import java.util.Objects;

/**
 * Which AES-256-GCM provider seals and opens a record, by the record's payload size: {@link
 * #small()} below {@link #bulkFrom()} bytes, {@link #bulk()} from there up. Both compute the same
 * standard AES-256-GCM (each passed the {@link AeadKnownAnswer known-answer test}), so a record
 * sealed by one opens with the other; the split is only about speed — on a CPU where one library is
 * fastest per small record (few calls, little set-up) and another per large one (wide vector code),
 * each size gets the faster. A plan of one provider ({@link #single}) uses it for every size.
 *
 * <p>Immutable; thread-safe.
 */
public final class AeadPlan {
  private final AeadProvider small;
  private final AeadProvider bulk;
  private final int bulkFrom;

  private AeadPlan(AeadProvider small, AeadProvider bulk, int bulkFrom) {
    this.small = Objects.requireNonNull(small, "small");
    this.bulk = Objects.requireNonNull(bulk, "bulk");
    this.bulkFrom = bulkFrom;
  }

  /** One provider for every record. */
  public static AeadPlan single(AeadProvider provider) {
    return new AeadPlan(provider, provider, Integer.MAX_VALUE);
  }

  /**
   * {@code small} for payloads under {@code bulkFrom} bytes, {@code bulk} for the rest; a single
   * plan when both are the same provider.
   *
   * @throws IllegalArgumentException when {@code bulkFrom} is not positive
   */
  public static AeadPlan split(AeadProvider small, AeadProvider bulk, int bulkFrom) {
    if (bulkFrom < 1) {
      throw new IllegalArgumentException("bulkFrom must be positive: " + bulkFrom);
    }
    return small.name().equals(bulk.name()) ? single(small) : new AeadPlan(small, bulk, bulkFrom);
  }

  /** The provider of payloads under {@link #bulkFrom()} bytes (every payload when single). */
  public AeadProvider small() {
    return small;
  }

  /** The provider of payloads of {@link #bulkFrom()} bytes and more (the small one when single). */
  public AeadProvider bulk() {
    return bulk;
  }

  /** The payload size from which {@link #bulk()} is used; {@link Integer#MAX_VALUE} when single. */
  public int bulkFrom() {
    return bulkFrom;
  }

  /** Whether one provider does every record. */
  public boolean isSingle() {
    return small == bulk;
  }

  /** The provider of a record of {@code payloadLength} bytes. */
  public AeadProvider forPayload(int payloadLength) {
    return payloadLength < bulkFrom ? small : bulk;
  }

  /**
   * The plan of records of at most {@code maxPayload} bytes: single when they all fall on one side.
   */
  AeadPlan upTo(int maxPayload) {
    return maxPayload < bulkFrom ? single(small) : this;
  }

  /** {@code gcrypt}, or {@code gcrypt under 4 KiB, accp from 4 KiB}. */
  public String label() {
    if (isSingle()) {
      return small.name();
    }
    String at = size(bulkFrom);
    return small.name() + " under " + at + ", " + bulk.name() + " from " + at;
  }

  /** As {@link #label()}, each provider with its description. */
  public String description() {
    if (isSingle()) {
      return small.toString();
    }
    String at = size(bulkFrom);
    return small + " under " + at + ", " + bulk + " from " + at;
  }

  static String size(int bytes) {
    if (bytes % (1024 * 1024) == 0) {
      return bytes / (1024 * 1024) + " MiB";
    }
    return bytes % 1024 == 0 ? bytes / 1024 + " KiB" : bytes + " B";
  }

  @Override
  public String toString() {
    return label();
  }
}
