package io.srdma.channel;

import io.srdma.channel.protocol.ProtocolException;
import io.srdma.channel.record.OwnerOpener;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordException;
import io.srdma.channel.record.RegionKeyMaterial;
import io.srdma.channel.record.RegionKeyring;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A grant a {@link SecureRdmaClient} holds: a range of one region of its tenant, the operations
 * allowed on it and until when. Writes are sealed before they leave; reads open owner-sealed
 * records. Every access is checked here first (the writer's check) and again by the target's RNIC.
 *
 * <p>A grant with READ holds the region's keys ({@link RegionKeyring}): the generation its GRANT
 * carried, then each newer one the host pushes (REGION_KEY); the previous generation opens for
 * {@link RegionKeyring#GRACE} more, then is wiped, and all are wiped when the grant ends.
 *
 * <p>Thread safety: thread-safe; several threads may write and read through one grant at once.
 * Buffers: {@link #write} seals the caller's data into the client's staging memory before it
 * returns (the buffer's position is not moved), so the caller may reuse the buffer as soon as
 * {@code write} returns, before the stage completes; {@link #read} completes with a new heap buffer
 * that belongs to the caller.
 */
public final class RemoteGrant {
  private final SecureRdmaClient client;
  private final long id;
  private final String tenant;
  private final String region;
  private final long offset;
  private final long length;
  private final Set<Access> access;
  private final Instant expiresAt;
  final long remoteAddress;
  final int rkey;
  final long unit;
  final RecordBinding writeBinding;
  final RegionKeyring regionKeys;
  final OwnerOpener readOpener;
  private volatile String endedBecause;

  RemoteGrant(
      SecureRdmaClient client,
      long id,
      String tenant,
      String region,
      long offset,
      long length,
      Set<Access> access,
      Instant expiresAt,
      long remoteAddress,
      int rkey,
      byte[] regionKey,
      int maxRecordPayload) {
    this.client = client;
    this.id = id;
    this.tenant = tenant;
    this.region = region;
    this.offset = offset;
    this.length = length;
    this.access = Set.copyOf(access);
    this.expiresAt = expiresAt;
    this.remoteAddress = remoteAddress;
    this.rkey = rkey;
    this.unit = SealedLayout.writeUnit(length);
    this.writeBinding = RecordBinding.of(id, tenant, region);
    if (regionKey.length == RegionKeyMaterial.LENGTH) {
      RegionKeyring ring;
      try {
        ring = new RegionKeyring(regionKey);
      } catch (RecordException e) {
        throw new ProtocolException(
            ProtocolException.Reason.BAD_VALUE, "GRANT region key: " + e.getMessage());
      }
      regionKeys = ring;
      readOpener =
          new OwnerOpener(ring::keys, ring.owner(), tenant, region, maxRecordPayload, true);
    } else {
      regionKeys = null;
      readOpener = null;
    }
    Arrays.fill(regionKey, (byte) 0);
  }

  /**
   * Installs a newer generation of the region key from REGION_KEY (control thread); the material is
   * wiped.
   *
   * @throws ProtocolException BAD_VALUE when the grant has no READ, the material is malformed,
   *     names another generation than the frame or another owner key
   */
  void regionKeyRotated(int generation, byte[] material) {
    try {
      if (regionKeys == null) {
        throw new ProtocolException(
            ProtocolException.Reason.BAD_VALUE, "REGION_KEY for grant " + id + " without READ");
      }
      try {
        if (RegionKeyMaterial.generation(material) != generation) {
          throw new ProtocolException(
              ProtocolException.Reason.BAD_VALUE,
              "REGION_KEY generation does not match its key material");
        }
        regionKeys.install(material);
      } catch (RecordException e) {
        throw new ProtocolException(
            ProtocolException.Reason.BAD_VALUE, "REGION_KEY: " + e.getMessage());
      }
    } finally {
      Arrays.fill(material, (byte) 0);
    }
  }

  /**
   * Wipes the previous generation's key once its grace passed (client timer); under the read lock,
   * so no read is using the key while it is wiped.
   */
  void expireRegionKeys() {
    if (regionKeys != null) {
      synchronized (readOpener) {
        regionKeys.expire();
      }
    }
  }

  /** The newest region key generation this grant holds, or -1 without READ. */
  int regionKeyGeneration() {
    return regionKeys == null ? -1 : regionKeys.generation();
  }

  /** The slot the host gave the grant on this session (the low 8 bits of its id). */
  int slot() {
    return (int) (id & 0xff);
  }

  /** The grant's id (as the host's audit log and console show it). */
  public long id() {
    return id;
  }

  /** The region. */
  public String region() {
    return region;
  }

  /** First granted byte of the region. */
  public long offset() {
    return offset;
  }

  /** Granted bytes; offsets of {@link #write} and {@link #read} are relative to {@link #offset}. */
  public long length() {
    return length;
  }

  /** Allowed operations. */
  public Set<Access> access() {
    return access;
  }

  /** When the grant expires (the host's clock). */
  public Instant expiresAt() {
    return expiresAt;
  }

  /** Whether the grant may still be used: not revoked, released, expired or its session lost. */
  public boolean isValid() {
    return endedBecause == null && Instant.now().isBefore(expiresAt);
  }

  /** Why the grant ended ({@code REVOKED}, {@code EXPIRED}, …), or null while it is live. */
  public String endedBecause() {
    return endedBecause;
  }

  /**
   * Seals {@code data} (from its position; not moved) and writes it with RDMA WRITE_WITH_IMM at
   * {@code relativeOffset} in the grant: records of at most the client's record size laid end to
   * end. Completes when every record's write completed at the target.
   *
   * @return a stage failing with {@link ChannelException} ({@code OUT_OF_BOUNDS}, {@code
   *     NOT_PERMITTED}, {@code REVOKED}, {@code EXPIRED}, {@code REMOTE_ACCESS_ERROR}, …)
   */
  public CompletionStage<Void> write(long relativeOffset, ByteBuffer data) {
    return client.write(this, relativeOffset, data);
  }

  /** {@link #write}, waiting for it (at most the client's request timeout per batch). */
  public void writeBlocking(long relativeOffset, ByteBuffer data) {
    SecureRdmaClient.join(write(relativeOffset, data).toCompletableFuture(), client.timeout());
  }

  /**
   * Fetches {@code sealedLength} bytes at {@code relativeOffset} with RDMA READ and opens the
   * owner-sealed records in them with the region key this grant carries.
   *
   * @return the plaintext of the records, in order
   */
  public CompletionStage<ByteBuffer> read(long relativeOffset, int sealedLength) {
    return client.read(this, relativeOffset, sealedLength);
  }

  /** {@link #read}, waiting for it. */
  public ByteBuffer readBlocking(long relativeOffset, int sealedLength) {
    return SecureRdmaClient.join(
        read(relativeOffset, sealedLength).toCompletableFuture(), client.timeout());
  }

  /** Gives the grant back before it expires; completes when the host confirmed. */
  public CompletionStage<Void> release() {
    if (endedBecause != null) {
      return CompletableFuture.completedFuture(null);
    }
    return client.release(this);
  }

  CompletableFuture<Void> check(Access needed, long relativeOffset, long span) {
    String ended = endedBecause;
    if (ended != null) {
      ChannelException.Reason reason =
          switch (ended) {
            case "EXPIRED" -> ChannelException.Reason.EXPIRED;
            case "SESSION_CLOSED" -> ChannelException.Reason.SESSION_CLOSED;
            default -> ChannelException.Reason.REVOKED;
          };
      return failed(reason, "grant " + id + " ended: " + ended);
    }
    if (!Instant.now().isBefore(expiresAt)) {
      return failed(ChannelException.Reason.EXPIRED, "grant " + id + " expired at " + expiresAt);
    }
    if (!access.contains(needed)) {
      return failed(
          ChannelException.Reason.NOT_PERMITTED,
          "grant " + id + " allows " + access + ", not " + needed);
    }
    if (relativeOffset < 0
        || span < 0
        || relativeOffset > length
        || length - relativeOffset < span) {
      return failed(
          ChannelException.Reason.OUT_OF_BOUNDS,
          span
              + " bytes at offset "
              + relativeOffset
              + " do not fit grant "
              + id
              + " of "
              + length
              + " bytes");
    }
    return null;
  }

  static <T> CompletableFuture<T> failed(ChannelException.Reason reason, String message) {
    return CompletableFuture.failedFuture(new ChannelException(reason, message));
  }

  void end(String reason) {
    if (endedBecause == null) {
      endedBecause = reason;
    }
    if (regionKeys != null) {
      synchronized (readOpener) { // a read in progress finishes with the keys it holds
        regionKeys.close();
      }
    }
  }

  @Override
  public String toString() {
    return "RemoteGrant["
        + id
        + " "
        + tenant
        + "/"
        + region
        + " ["
        + offset
        + ", +"
        + length
        + ") "
        + access
        + " until "
        + expiresAt
        + (endedBecause == null ? "" : ", ended: " + endedBecause)
        + "]";
  }

  static Duration remaining(Instant until) {
    return Duration.between(Instant.now(), until);
  }
}
