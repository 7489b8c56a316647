package io.srdma.bench.transport;

import io.srdma.channel.SealedLayout;
import io.srdma.host.HostOptions;
import java.time.Duration;

/**
 * What {@code srdma bench --load} runs (see {@link LoadRun}); {@code hostProcess}: the host in a
 * child JVM ({@link LoadHostProcess}, {@code --host-process}) instead of the clients' JVM; {@code
 * openerThreads}: the host's opener threads ({@code --opener-threads}), 0 for the host's default
 * (the number of cores).
 *
 * <p>Thread safety: immutable.
 */
public record LoadConfig(
    int sessions,
    int tenants,
    int grants,
    Duration duration,
    Duration warmup,
    int recordSize,
    int window,
    double revocationsPerSecond,
    long rekeyRecords,
    String provider,
    boolean hostProcess,
    int openerThreads) {
  /** Host and clients in one process. */
  public LoadConfig(
      int sessions,
      int tenants,
      int grants,
      Duration duration,
      Duration warmup,
      int recordSize,
      int window,
      double revocationsPerSecond,
      long rekeyRecords,
      String provider) {
    this(
        sessions,
        tenants,
        grants,
        duration,
        warmup,
        recordSize,
        window,
        revocationsPerSecond,
        rekeyRecords,
        provider,
        false,
        0);
  }

  /** This configuration with the host in a child process or not. */
  public LoadConfig withHostProcess(boolean inChild) {
    return new LoadConfig(
        sessions,
        tenants,
        grants,
        duration,
        warmup,
        recordSize,
        window,
        revocationsPerSecond,
        rekeyRecords,
        provider,
        inChild,
        openerThreads);
  }

  /** This configuration with {@code n} opener threads on the host (0: the host's default). */
  public LoadConfig withOpenerThreads(int n) {
    return new LoadConfig(
        sessions,
        tenants,
        grants,
        duration,
        warmup,
        recordSize,
        window,
        revocationsPerSecond,
        rekeyRecords,
        provider,
        hostProcess,
        n);
  }

  public int grantsPerSession() {
    return (grants + sessions - 1) / sessions;
  }

  public int sessionsPerTenant() {
    return (sessions + tenants - 1) / tenants;
  }

  public long grantLength() {
    return LoadRun.REGION_BYTES / ((long) sessionsPerTenant() * grantsPerSession());
  }

  public long sealedRecord() {
    return SealedLayout.sealedLength(recordSize, recordSize);
  }

  public long slotsPerGrant() {
    return grantLength() / sealedRecord();
  }

  /** Why this configuration cannot run, or null. */
  public String problem() {
    if (sessions < 1 || tenants < 1 || grants < 1 || window < 1) {
      return "sessions, tenants, grants and window must be >= 1";
    }
    if (tenants > sessions) {
      return "more tenants (" + tenants + ") than sessions (" + sessions + ")";
    }
    if (grantsPerSession() < 2 || grantsPerSession() > 200) {
      return "grants per session must be 2..200, got " + grantsPerSession();
    }
    if (recordSize < LoadRun.HEADER || recordSize > 65536) {
      return "record size must be " + LoadRun.HEADER + "..65536, got " + recordSize;
    }
    if (slotsPerGrant() < 1) {
      return "a grant of "
          + grantLength()
          + " B (1 MiB per tenant / its grants) cannot hold a sealed record of "
          + sealedRecord()
          + " B: fewer grants per tenant or a smaller --record-size";
    }
    if ((grantsPerSession() - 1) * slotsPerGrant() <= window) {
      return "--window " + window + " must be below the slots a session rotates over";
    }
    if (revocationsPerSecond < 0 || rekeyRecords < 1) {
      return "revocation rate must be >= 0 and rekey records >= 1";
    }
    if (openerThreads < 0 || openerThreads > HostOptions.MAX_OPENER_THREADS) {
      return "--opener-threads must be 1.."
          + HostOptions.MAX_OPENER_THREADS
          + " (or 0 for the host's default), got "
          + openerThreads;
    }
    return null;
  }
}
