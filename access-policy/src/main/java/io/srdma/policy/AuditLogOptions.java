package io.srdma.policy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * How to open an {@link AuditLog}: fluent setters, checked by {@link
 * AuditLog#open(AuditLogOptions)}. Not thread-safe; do not change after opening.
 */
public final class AuditLogOptions {
  /** Default checkpoint interval in lines. */
  public static final int DEFAULT_CHECKPOINT_LINES = 1000;

  /** Default checkpoint interval in time. */
  public static final Duration DEFAULT_CHECKPOINT_INTERVAL = Duration.ofSeconds(60);

  private final Path file;
  private Path keyFile;
  private AuditKey key;
  private long rotateBytes = AuditLog.DEFAULT_ROTATE_BYTES;
  private Clock clock = Clock.systemUTC();
  private AuditSigner signer;
  private int checkpointLines = DEFAULT_CHECKPOINT_LINES;
  private Duration checkpointInterval = DEFAULT_CHECKPOINT_INTERVAL;

  /**
   * Options for a log.
   *
   * @param file the active log file
   */
  public AuditLogOptions(Path file) {
    this.file = Objects.requireNonNull(file, "file").toAbsolutePath();
  }

  /**
   * The audit key file, created {@code 600} with a new key if missing. Default {@link
   * AuditKey#defaultFile}.
   */
  public AuditLogOptions keyFile(Path keyFile) {
    this.keyFile = Objects.requireNonNull(keyFile, "keyFile");
    return this;
  }

  /** A key held by the caller (who closes it) instead of a key file. */
  public AuditLogOptions key(AuditKey key) {
    this.key = Objects.requireNonNull(key, "key");
    return this;
  }

  /** Rotate when the next line would take the file past this size (at least 1024). */
  public AuditLogOptions rotateBytes(long rotateBytes) {
    this.rotateBytes = rotateBytes;
    return this;
  }

  /** The clock of line times. */
  public AuditLogOptions clock(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  /** Signs checkpoints with the host's certificate key; without one no checkpoints are written. */
  public AuditLogOptions signer(AuditSigner signer) {
    this.signer = signer;
    return this;
  }

  /** A checkpoint after at most this many lines (1..1000000). */
  public AuditLogOptions checkpointLines(int lines) {
    this.checkpointLines = lines;
    return this;
  }

  /**
   * A checkpoint at least this often while lines are waiting for one; {@link Duration#ZERO} for
   * none by time (then only by lines, at rotation and at close).
   */
  public AuditLogOptions checkpointInterval(Duration interval) {
    this.checkpointInterval = Objects.requireNonNull(interval, "interval");
    return this;
  }

  void conclude() {
    if (rotateBytes < 1024) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT, "rotateBytes below 1024: " + rotateBytes);
    }
    if (checkpointLines < 1 || checkpointLines > 1_000_000) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT,
          "checkpointLines not in 1..1000000: " + checkpointLines);
    }
    if (checkpointInterval.isNegative()) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT,
          "checkpointInterval negative: " + checkpointInterval);
    }
  }

  Path file() {
    return file;
  }

  Path keyFile() {
    return keyFile != null ? keyFile : AuditKey.defaultFile(file);
  }

  AuditKey key() {
    return key;
  }

  long rotateBytes() {
    return rotateBytes;
  }

  Clock clock() {
    return clock;
  }

  AuditSigner signer() {
    return signer;
  }

  int checkpointLines() {
    return checkpointLines;
  }

  Duration checkpointInterval() {
    return checkpointInterval;
  }
}
