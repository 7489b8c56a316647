package io.srdma.channel;

import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordSealer;
import io.srdma.keys.Direction;
import io.srdma.keys.DirectionKeys;
import io.srdma.verbs.MemoryRegion;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Memory a {@link RegionHost} registered for one region of one tenant, in that tenant's protection
 * domain. Tenant peers write sealed records into it through grants; the host reads them through
 * {@link #onRecord}. The host can also seal records into it that readers holding a read grant fetch
 * with RDMA READ and open with the region key their grant carries.
 */
public final class HostedRegion {
  /** Length of the region key material a read grant carries: generation, key, nonce prefix. */
  static final int REGION_KEY_MATERIAL = 4 + DirectionKeys.KEY_LENGTH + 4;

  private final String tenant;
  private final String name;
  private final ByteBuffer memory;
  private final MemoryRegion registration;
  private final byte[] regionKeyMaterial = new byte[REGION_KEY_MATERIAL];
  private final DirectionKeys regionKeys;
  private final RecordSealer sealer;
  private final RecordBinding ownerBinding;
  private final int maxRecordPayload;
  final AtomicInteger liveGrants = new AtomicInteger();
  private volatile RecordListener listener;

  HostedRegion(
      String tenant, String name, ByteBuffer memory, MemoryRegion registration, int maxPayload) {
    this.tenant = tenant;
    this.name = name;
    this.memory = memory;
    this.registration = registration;
    this.maxRecordPayload = maxPayload;
    SecureRandom random = new SecureRandom();
    byte[] key = new byte[DirectionKeys.KEY_LENGTH];
    byte[] prefix = new byte[4];
    random.nextBytes(key);
    random.nextBytes(prefix);
    regionKeys = DirectionKeys.fromMaterial(Direction.RESPONDER_TO_INITIATOR, 0, key, prefix);
    System.arraycopy(key, 0, regionKeyMaterial, 4, key.length);
    System.arraycopy(prefix, 0, regionKeyMaterial, 4 + key.length, prefix.length);
    java.util.Arrays.fill(key, (byte) 0);
    sealer = new RecordSealer(regionKeys, maxPayload);
    ownerBinding = RecordBinding.of(0L, tenant, name);
  }

  /** The tenant that owns the region. */
  public String tenant() {
    return tenant;
  }

  /** The region's name in the policy. */
  public String name() {
    return name;
  }

  /** Registered bytes. */
  public long size() {
    return memory.capacity();
  }

  /** Grants live on this region now. */
  public int liveGrants() {
    return liveGrants.get();
  }

  /**
   * Sets who is told of records written into this region (replacing any earlier listener). Without
   * a listener records are still verified and counted, and their plaintext is dropped.
   */
  public void onRecord(RecordListener value) {
    listener = value;
  }

  /**
   * Seals {@code plaintext} (from its position; not moved) into the region at {@code offset}, as
   * records laid end to end, for readers with a read grant over that range.
   *
   * @return region bytes written ({@link SealedLayout#sealedLength})
   * @throws ChannelException {@code OUT_OF_BOUNDS} when the sealed data would not fit; nothing is
   *     written then
   */
  public synchronized long seal(long offset, ByteBuffer plaintext) {
    long total = SealedLayout.sealedLength(plaintext.remaining(), maxRecordPayload);
    if (offset < 0 || offset > memory.capacity() || memory.capacity() - offset < total) {
      throw new ChannelException(
          ChannelException.Reason.OUT_OF_BOUNDS,
          "sealing "
              + total
              + " bytes at offset "
              + offset
              + " does not fit region "
              + tenant
              + "/"
              + name
              + " of "
              + memory.capacity()
              + " bytes");
    }
    ByteBuffer src = plaintext.duplicate();
    long at = offset;
    while (src.hasRemaining()) {
      int n = Math.min(src.remaining(), maxRecordPayload);
      ByteBuffer chunk = src.slice(src.position(), n);
      int written = sealer.seal(chunk, ownerBinding, at, memory, (int) at);
      if (written < 0) {
        throw new ChannelException(
            ChannelException.Reason.RESOURCE_EXHAUSTED,
            "region key sequence spent (" + written + ")");
      }
      at += written;
      src.position(src.position() + n);
    }
    return total;
  }

  /**
   * Copies raw region bytes (ciphertext as written) into {@code destination}: for checks and
   * diagnostics.
   */
  public void copy(long offset, byte[] destination) {
    if (offset < 0 || offset > memory.capacity() - (long) destination.length) {
      throw new ChannelException(
          ChannelException.Reason.OUT_OF_BOUNDS,
          "copy of " + destination.length + " bytes at " + offset + " is outside the region");
    }
    memory.get((int) offset, destination);
  }

  ByteBuffer memory() {
    return memory;
  }

  MemoryRegion registration() {
    return registration;
  }

  RecordListener listener() {
    return listener;
  }

  /** Generation ‖ key ‖ nonce prefix: what a read grant carries. A copy; wipe it after use. */
  byte[] regionKeyMaterial() {
    return regionKeyMaterial.clone();
  }

  void close() {
    registration.close();
    regionKeys.close();
    java.util.Arrays.fill(regionKeyMaterial, (byte) 0);
  }

  @Override
  public String toString() {
    return "HostedRegion[" + tenant + "/" + name + ", " + memory.capacity() + " bytes]";
  }
}
