package io.srdma.channel.record;

import io.srdma.keys.Direction;
import io.srdma.keys.DirectionKeys;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.time.Duration;
import java.util.Arrays;

/**
 * A reader's region keys: the newest generation, and the one before it for {@link #GRACE} after the
 * newer one arrived (records of the previous generation that a read was fetching while the owner
 * re-sealed them still open), then that key is wiped. Generations only move forward; the owner's
 * public key never changes for a region. Thread-safe.
 */
public final class RegionKeyring implements AutoCloseable {
  /** How long the previous generation still opens after a newer one arrived. */
  public static final Duration GRACE = Duration.ofSeconds(5);

  private final Duration grace;
  private final byte[] ownerRaw;
  private final PublicKey owner;
  private DirectionKeys current;
  private DirectionKeys previous;
  private long previousUntil;
  private boolean closed;

  /**
   * A keyring with the material of a GRANT; the material is wiped.
   *
   * @throws RecordException BAD_ARGUMENT for material of the wrong shape
   */
  public RegionKeyring(byte[] material) {
    this(material, GRACE);
  }

  /** A keyring with another grace than {@link #GRACE} (tests). */
  RegionKeyring(byte[] material, Duration grace) {
    this.grace = grace;
    try {
      int generation = RegionKeyMaterial.generation(material);
      ownerRaw =
          Arrays.copyOfRange(
              material, RegionKeyMaterial.OWNER_OFFSET, RegionKeyMaterial.OWNER_OFFSET + 32);
      owner = OwnerSigning.publicKey(material, RegionKeyMaterial.OWNER_OFFSET);
      current = keys(generation, material);
    } finally {
      Arrays.fill(material, (byte) 0);
    }
  }

  private static DirectionKeys keys(int generation, byte[] material) {
    byte[] key =
        Arrays.copyOfRange(material, RegionKeyMaterial.KEY_OFFSET, RegionKeyMaterial.PREFIX_OFFSET);
    byte[] prefix =
        Arrays.copyOfRange(
            material, RegionKeyMaterial.PREFIX_OFFSET, RegionKeyMaterial.OWNER_OFFSET);
    try {
      return DirectionKeys.fromMaterial(Direction.RESPONDER_TO_INITIATOR, generation, key, prefix);
    } catch (IllegalArgumentException e) {
      throw new RecordException(RecordException.Reason.BAD_ARGUMENT, "bad region key material");
    } finally {
      Arrays.fill(key, (byte) 0);
      Arrays.fill(prefix, (byte) 0);
    }
  }

  /**
   * Installs the material of a REGION_KEY (wiped here). An older or equal generation is ignored.
   *
   * @return whether a newer generation was installed
   * @throws RecordException BAD_ARGUMENT for material of the wrong shape or naming another owner
   *     key than the region's
   */
  public synchronized boolean install(byte[] material) {
    try {
      int generation = RegionKeyMaterial.generation(material);
      if (!MessageDigest.isEqual(
          ownerRaw,
          Arrays.copyOfRange(material, RegionKeyMaterial.OWNER_OFFSET, RegionKeyMaterial.LENGTH))) {
        throw new RecordException(
            RecordException.Reason.BAD_ARGUMENT, "region key names another owner key");
      }
      if (closed || generation <= current.epoch()) {
        return false;
      }
      DirectionKeys next = keys(generation, material);
      if (previous != null) {
        previous.close();
      }
      previous = current;
      previousUntil = System.nanoTime() + grace.toNanos();
      current = next;
      notifyAll();
      return true;
    } finally {
      Arrays.fill(material, (byte) 0);
    }
  }

  /** The key of {@code generation}: the newest, or the previous one within its grace; else null. */
  public synchronized DirectionKeys keys(int generation) {
    expire();
    if (closed) {
      return null;
    }
    if (generation == current.epoch()) {
      return current;
    }
    if (previous != null && generation == previous.epoch()) {
      return previous;
    }
    return null;
  }

  /** Wipes the previous generation's key once its grace has passed. */
  public synchronized void expire() {
    if (previous != null && System.nanoTime() - previousUntil >= 0) {
      previous.close();
      previous = null;
    }
  }

  /** The newest generation. */
  public synchronized int generation() {
    return current.epoch();
  }

  /** The owner's public key. */
  public PublicKey owner() {
    return owner;
  }

  /**
   * Waits at most {@code max} for a generation newer than {@code generation}.
   *
   * @return whether one is there
   */
  public synchronized boolean awaitNewerThan(int generation, Duration max)
      throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    while (!closed && current.epoch() <= generation) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return !closed;
  }

  /** Whether every key was wiped ({@link #close}). */
  public synchronized boolean isClosed() {
    return closed && current.isClosed() && (previous == null || previous.isClosed());
  }

  /** Wipes every key. */
  @Override
  public synchronized void close() {
    closed = true;
    current.close();
    if (previous != null) {
      previous.close();
    }
    notifyAll();
  }
}
