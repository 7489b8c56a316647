package io.srdma.keys;

import java.time.Duration;

/**
 * When a session moves to its next epoch: after a number of records, a number of bytes, or an age,
 * whichever comes first. The defaults are far below the AES-GCM limits for a deterministic nonce
 * (NIST SP 800-38D: 2^32 invocations per key with random nonces is the usual conservative bound;
 * TLS 1.3 rekeys AES-GCM after 2^24.5 full records).
 *
 * <p>Each limit can be set with a system property ({@code *_PROP_NAME}) or a {@code with*} method.
 */
public final class RekeyPolicy {
  /** System property of {@link #maxRecords()}. */
  public static final String MAX_RECORDS_PROP_NAME = "srdma.rekey.records";

  /** Default of {@link #maxRecords()}: 2^24 records. */
  public static final long MAX_RECORDS_DEFAULT = 1L << 24;

  /** System property of {@link #maxBytes()}. */
  public static final String MAX_BYTES_PROP_NAME = "srdma.rekey.bytes";

  /** Default of {@link #maxBytes()}: 2^36 bytes (64 GiB). */
  public static final long MAX_BYTES_DEFAULT = 1L << 36;

  /** System property of {@link #maxAge()}, in seconds. */
  public static final String MAX_AGE_PROP_NAME = "srdma.rekey.seconds";

  /** Default of {@link #maxAge()}: one hour. */
  public static final Duration MAX_AGE_DEFAULT = Duration.ofHours(1);

  private final long maxRecords;
  private final long maxBytes;
  private final Duration maxAge;

  private RekeyPolicy(long maxRecords, long maxBytes, Duration maxAge) {
    if (maxRecords <= 0 || maxRecords > 1L << 32) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT, "max records must be in 1..2^32");
    }
    if (maxBytes <= 0 || maxAge.isNegative() || maxAge.isZero()) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT, "max bytes and max age must be positive");
    }
    this.maxRecords = maxRecords;
    this.maxBytes = maxBytes;
    this.maxAge = maxAge;
  }

  /** The defaults, overridden by the system properties where set. */
  public static RekeyPolicy fromSystemProperties() {
    return new RekeyPolicy(
        Long.getLong(MAX_RECORDS_PROP_NAME, MAX_RECORDS_DEFAULT),
        Long.getLong(MAX_BYTES_PROP_NAME, MAX_BYTES_DEFAULT),
        Duration.ofSeconds(Long.getLong(MAX_AGE_PROP_NAME, MAX_AGE_DEFAULT.toSeconds())));
  }

  /** A copy with another record limit. */
  public RekeyPolicy withMaxRecords(long records) {
    return new RekeyPolicy(records, maxBytes, maxAge);
  }

  /** A copy with another byte limit. */
  public RekeyPolicy withMaxBytes(long bytes) {
    return new RekeyPolicy(maxRecords, bytes, maxAge);
  }

  /** A copy with another age limit. */
  public RekeyPolicy withMaxAge(Duration age) {
    return new RekeyPolicy(maxRecords, maxBytes, age);
  }

  /** Records sealed under one epoch before a rekey. */
  public long maxRecords() {
    return maxRecords;
  }

  /** Bytes sealed under one epoch before a rekey. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Age of an epoch before a rekey. */
  public Duration maxAge() {
    return maxAge;
  }

  /** Whether an epoch that sealed {@code records} records and {@code bytes} bytes is due. */
  public boolean isDue(long records, long bytes, Duration age) {
    return records >= maxRecords || bytes >= maxBytes || age.compareTo(maxAge) >= 0;
  }

  @Override
  public String toString() {
    return "RekeyPolicy[records=" + maxRecords + ", bytes=" + maxBytes + ", age=" + maxAge + "]";
  }
}
