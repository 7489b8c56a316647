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
import java.util.concurrent.ScheduledFuture;

/**
 * A grant a {@link SecureRdmaClient} holds: a range of one region of its tenant, the operations
 * allowed on it and until when. Writes are sealed before they leave; reads open owner-sealed
 * records. Every access is checked here first (the writer's check) and again by the target's RNIC.
 *
 * <p>Two ways to write:
 *
 * <ul>
 *   <li>{@link #tryWrite} and {@link #tryWriteBatch}: the data path. They allocate nothing, never
 *       block (the client's writer lock aside) and hand nothing to another thread: the caller seals
 *       into a registered staging slot and posts. They return a position (&gt; 0) or a {@link
 *       WriteResult} code; {@link WriteResult#BACK_PRESSURED} means every staging slot is in
 *       flight, or the host has not yet credited the receives the records need (receive credits,
 *       {@link ClientOptions#stagingSlots}): poll ({@link SecureRdmaClient#pollCompletions()}) or
 *       idle, then try again. Completion: {@link SecureRdmaClient#completedPosition()} or a {@link
 *       WriteCompletionHandler}.
 *   <li>{@link #write} and {@link #writeBlocking}: convenience. Any length (split into records),
 *       waiting up to the request timeout for slots, a {@link CompletionStage} per call; they
 *       allocate.
 * </ul>
 *
 * <p>Buffer ownership: every write reads the caller's bytes (sealing them into staging memory)
 * before it returns; the caller may reuse its buffers at once. A read returns a new heap buffer of
 * plaintext that belongs to the caller; the client's registered read buffer is never exposed.
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
  private final GrantTarget target;
  private final SealedWriter writer;
  private final WriteStages stages;
  private final SealedReader reader;
  private final ControlChannel control;
  private final Set<Access> access;
  final long remoteAddress;
  final int rkey;
  final long unit;
  final RecordBinding writeBinding;
  final RegionKeyring regionKeys;
  final OwnerOpener readOpener;
  private volatile String endedBecause;
  private volatile long endedCode; // 0 while live, else a WriteResult code
  private volatile ScheduledFuture<?> keyExpiry; // the one pending wipe of the previous key

  RemoteGrant(
      GrantTarget target,
      SealedWriter writer,
      WriteStages stages,
      SealedReader reader,
      ControlChannel control,
      byte[] regionKey,
      int maxRecordPayload) {
    this.target = target;
    this.writer = writer;
    this.stages = stages;
    this.reader = reader;
    this.control = control;
    this.access = Set.copyOf(Access.fromBits(target.accessBits()));
    this.remoteAddress = target.remoteAddress();
    this.rkey = target.rkey();
    this.unit = target.unit();
    this.writeBinding = target.binding();
    if (regionKey.length != 0 && regionKey.length != RegionKeyMaterial.LENGTH) {
      // a READ grant whose key the data plane cannot use: malformed, not a grant without a key
      Arrays.fill(regionKey, (byte) 0);
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE,
          "GRANT region key of "
              + regionKey.length
              + " bytes, the material is "
              + RegionKeyMaterial.LENGTH);
    }
    if (regionKey.length == RegionKeyMaterial.LENGTH) {
      RegionKeyring ring;
      try {
        ring = new RegionKeyring(regionKey);
      } catch (RecordException e) {
        throw new ProtocolException(
            ProtocolException.Reason.BAD_VALUE, "GRANT region key: " + e.getMessage());
      } finally {
        Arrays.fill(regionKey, (byte) 0);
      }
      regionKeys = ring;
      readOpener =
          new OwnerOpener(
              ring::keys, ring.owner(), target.tenant(), target.region(), maxRecordPayload, true);
    } else {
      Arrays.fill(regionKey, (byte) 0);
      regionKeys = null;
      readOpener = null;
    }
  }

  /** Where this grant's records go (immutable). */
  GrantTarget target() {
    return target;
  }

  /** 0 while the grant is live, else the {@link WriteResult} code of how it ended. */
  long endedCode() {
    return endedCode;
  }

  /**
   * Installs a newer generation of the region key from REGION_KEY (control thread); the material is
   * wiped.
   *
   * @return whether it was installed: false for a generation not newer than the one held (or once
   *     the grant ended)
   * @throws ProtocolException BAD_VALUE when the grant has no READ, the material is malformed,
   *     names another generation than the frame or another owner key
   */
  boolean regionKeyRotated(int generation, byte[] material) {
    try {
      if (regionKeys == null) {
        throw new ProtocolException(
            ProtocolException.Reason.BAD_VALUE, "REGION_KEY for grant " + id() + " without READ");
      }
      try {
        if (RegionKeyMaterial.generation(material) != generation) {
          throw new ProtocolException(
              ProtocolException.Reason.BAD_VALUE,
              "REGION_KEY generation does not match its key material");
        }
        return regionKeys.install(material);
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

  /**
   * Keeps {@code task} as the one pending wipe of the previous generation's key (control thread)
   * and cancels the one it replaces: that one's key was wiped when the newer generation came, and
   * this one's grace ends later. So a grant has at most one such task on the timer, however many
   * REGION_KEYs arrive.
   */
  void keyExpiryScheduled(ScheduledFuture<?> task) {
    ScheduledFuture<?> replaced = keyExpiry;
    keyExpiry = task;
    if (replaced != null) {
      replaced.cancel(false);
    }
    if (endedBecause != null) {
      task.cancel(false); // ended meanwhile: end() wiped every key
    }
  }

  /** The newest region key generation this grant holds, or -1 without READ. */
  int regionKeyGeneration() {
    return regionKeys == null ? -1 : regionKeys.generation();
  }

  /** The slot the host gave the grant on this session (the low 8 bits of its id). */
  int slot() {
    return target.slot();
  }

  /** The grant's id (as the host's audit log and console show it). */
  public long id() {
    return target.id();
  }

  /** The region. */
  public String region() {
    return target.region();
  }

  /** First granted byte of the region. */
  public long offset() {
    return target.offset();
  }

  /** Granted bytes; offsets of {@link #write} and {@link #read} are relative to {@link #offset}. */
  public long length() {
    return target.length();
  }

  /** Allowed operations. */
  public Set<Access> access() {
    return access;
  }

  /** When the grant expires (the host's clock). */
  public Instant expiresAt() {
    return target.expiresAt();
  }

  /** Whether the grant may still be used: not revoked, released, expired or its session lost. */
  public boolean isValid() {
    return endedBecause == null && Instant.now().isBefore(target.expiresAt());
  }

  /** Why the grant ended ({@code REVOKED}, {@code EXPIRED}, …), or null while it is live. */
  public String endedBecause() {
    return endedBecause;
  }

  /**
   * Seals {@code length} bytes of {@code src} from index {@code from} (absolute, within the
   * buffer's limit, else {@link WriteResult#INVALID_ARGUMENT}, also when another thread lowers the
   * limit during the call; its position is not used, neither is moved) as one record at {@code
   * relativeOffset} and posts it with WRITE_WITH_IMM; allocates nothing. The record takes {@code
   * length + }{@link SealedLayout#RECORD_OVERHEAD} bytes of the grant. Thread-safe.
   *
   * @param length 1 to the client's record size ({@link ClientOptions#maxRecordPayload})
   * @return the write's position (&gt; 0): it completed when {@link
   *     SecureRdmaClient#completedPosition()} reaches it; or {@link WriteResult#BACK_PRESSURED},
   *     {@link WriteResult#REVOKED}, {@link WriteResult#EXPIRED}, {@link
   *     WriteResult#OUT_OF_BOUNDS}, {@link WriteResult#NOT_PERMITTED}, {@link
   *     WriteResult#SESSION_CLOSED}, {@link WriteResult#DATA_PATH_FAILED}, {@link
   *     WriteResult#INVALID_ARGUMENT} (nothing posted)
   */
  public long tryWrite(long relativeOffset, ByteBuffer src, int from, int length) {
    return writer.tryWrite(this, relativeOffset, src, from, length);
  }

  /**
   * Seals a batch ({@link WriteBatch}: contiguous pieces as one record each) and posts its records
   * with one post list; allocates nothing. Every piece is checked first: one that is refused (out
   * of the grant's bounds, a contiguous run longer than the record size, records that overlap, …)
   * refuses the whole batch and nothing is posted; the grant's expiry is checked at one instant for
   * the whole batch. Thread-safe (the batch itself is not).
   *
   * @return the position of the batch's last record, or a {@link WriteResult} code as for {@link
   *     #tryWrite}
   */
  public long tryWriteBatch(WriteBatch batch) {
    return writer.tryWriteBatch(this, batch);
  }

  /**
   * Seals {@code data} (from its position to its limit, both read once at the call; not moved) and
   * writes it with RDMA WRITE_WITH_IMM at {@code relativeOffset} in the grant: records of at most
   * the client's record size laid end to end. Completes when every record's write completed at the
   * target. Allocates (the stage). A write larger than one post list goes out a post list at a
   * time: if it fails after some went out, those records stay written (docs/sdk.md, Write).
   *
   * @return a stage failing with {@link ChannelException} ({@code OUT_OF_BOUNDS}, {@code
   *     NOT_PERMITTED}, {@code REVOKED}, {@code EXPIRED}, {@code REMOTE_ACCESS_ERROR}, {@code
   *     INVALID_ARGUMENT} for nothing to write or a limit another thread lowered meanwhile, …)
   */
  public CompletionStage<Void> write(long relativeOffset, ByteBuffer data) {
    return stages.write(this, relativeOffset, data);
  }

  /** {@link #write}, waiting for it (at most the client's request timeout per batch). */
  public void writeBlocking(long relativeOffset, ByteBuffer data) {
    SecureRdmaClient.join(write(relativeOffset, data).toCompletableFuture(), control.timeout());
  }

  /**
   * Fetches {@code sealedLength} bytes at {@code relativeOffset} with RDMA READ and opens the
   * owner-sealed records in them with the region key this grant carries.
   *
   * @return the plaintext of the records, in order, in a new buffer the caller owns
   */
  public CompletionStage<ByteBuffer> read(long relativeOffset, int sealedLength) {
    return reader.read(this, relativeOffset, sealedLength);
  }

  /** {@link #read}, waiting for it. */
  public ByteBuffer readBlocking(long relativeOffset, int sealedLength) {
    return SecureRdmaClient.join(
        read(relativeOffset, sealedLength).toCompletableFuture(), control.timeout());
  }

  /** Gives the grant back before it expires; completes when the host confirmed. */
  public CompletionStage<Void> release() {
    if (endedBecause != null) {
      return CompletableFuture.completedFuture(null);
    }
    return control.release(this);
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
      return failed(reason, "grant " + id() + " ended: " + ended);
    }
    if (!Instant.now().isBefore(target.expiresAt())) {
      return failed(
          ChannelException.Reason.EXPIRED, "grant " + id() + " expired at " + target.expiresAt());
    }
    if (!target.allows(needed)) {
      return failed(
          ChannelException.Reason.NOT_PERMITTED,
          "grant " + id() + " allows " + access + ", not " + needed);
    }
    if (!target.inBounds(relativeOffset, span)) {
      return failed(
          ChannelException.Reason.OUT_OF_BOUNDS,
          span
              + " bytes at offset "
              + relativeOffset
              + " do not fit grant "
              + id()
              + " of "
              + length()
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
      endedCode =
          switch (reason) {
            case "EXPIRED" -> WriteResult.EXPIRED;
            case "SESSION_CLOSED" -> WriteResult.SESSION_CLOSED;
            default -> WriteResult.REVOKED;
          };
    }
    if (regionKeys != null) {
      synchronized (readOpener) { // a read in progress finishes with the keys it holds
        regionKeys.close();
      }
    }
    ScheduledFuture<?> expiry = keyExpiry;
    if (expiry != null) {
      expiry.cancel(false);
    }
  }

  @Override
  public String toString() {
    return "RemoteGrant["
        + id()
        + " "
        + target.tenant()
        + "/"
        + region()
        + " ["
        + offset()
        + ", +"
        + length()
        + ") "
        + access
        + " until "
        + expiresAt()
        + (endedBecause == null ? "" : ", ended: " + endedBecause)
        + "]";
  }

  static Duration remaining(Instant until) {
    return Duration.between(Instant.now(), until);
  }
}
