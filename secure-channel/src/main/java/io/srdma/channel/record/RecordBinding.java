package io.srdma.channel.record;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * What a record is bound to besides its header: the grant, the tenant and the region. Goes into the
 * associated data of every record, so a record moved to another grant, tenant or region fails to
 * open. Encoded once per grant; immutable.
 *
 * <p>Encoding: {@code u64 grant id ‖ u8 len ‖ tenant UTF-8 ‖ u8 len ‖ region UTF-8}; an owner
 * record's binding ({@link #owner}) has grant id 0 and adds {@code u32 generation ‖ u64 version
 * word}, so a record opens only under the region key generation and with the version (and the
 * "another record follows" bit, {@link OwnerSealer#FOLLOWED}) it was sealed with.
 */
public final class RecordBinding {
  /** Longest tenant or region name, in UTF-8 bytes. */
  public static final int MAX_NAME_BYTES = 255;

  private final long grantId;
  private final String tenant;
  private final String region;

  /** Bytes an owner binding adds: generation and version. */
  static final int OWNER_EXTRA = 4 + 8;

  private final byte[] encoded;

  private RecordBinding(long grantId, String tenant, String region, byte[] encoded) {
    this.grantId = grantId;
    this.tenant = tenant;
    this.region = region;
    this.encoded = encoded;
  }

  /**
   * The binding of a record the region's owner (the host) sealed: grant id 0, the region key
   * generation it is sealed under and its version word (see {@link OwnerSealer}: the version in
   * bits 0–62, {@link OwnerSealer#FOLLOWED} in bit 63).
   *
   * @throws RecordException BAD_ARGUMENT for an empty or over-long name, a negative generation or a
   *     version below 1
   */
  public static RecordBinding owner(String tenant, String region, int generation, long version) {
    if (generation < 0 || (version & ~OwnerSealer.FOLLOWED) < 1) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT,
          "owner binding needs generation >= 0 and version >= 1");
    }
    RecordBinding base = of(0L, tenant, region);
    byte[] e =
        ByteBuffer.allocate(base.encoded.length + OWNER_EXTRA)
            .put(base.encoded)
            .putInt(generation)
            .putLong(version)
            .array();
    return new RecordBinding(0L, tenant, region, e);
  }

  /**
   * A binding.
   *
   * @throws RecordException BAD_ARGUMENT for an empty or over-long name
   */
  public static RecordBinding of(long grantId, String tenant, String region) {
    byte[] t = name(tenant, "tenant");
    byte[] r = name(region, "region");
    byte[] e =
        ByteBuffer.allocate(8 + 1 + t.length + 1 + r.length)
            .putLong(grantId)
            .put((byte) t.length)
            .put(t)
            .put((byte) r.length)
            .put(r)
            .array();
    return new RecordBinding(grantId, tenant, region, e);
  }

  private static byte[] name(String s, String what) {
    if (s == null || s.isEmpty()) {
      throw new RecordException(RecordException.Reason.BAD_ARGUMENT, what + " name is empty");
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > MAX_NAME_BYTES) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT,
          what + " name longer than " + MAX_NAME_BYTES + " bytes");
    }
    return b;
  }

  /** The grant id. */
  public long grantId() {
    return grantId;
  }

  /** The tenant. */
  public String tenant() {
    return tenant;
  }

  /** The region. */
  public String region() {
    return region;
  }

  int encodedLength() {
    return encoded.length;
  }

  void copyTo(byte[] out, int offset) {
    System.arraycopy(encoded, 0, out, offset, encoded.length);
  }

  @Override
  public String toString() {
    return "RecordBinding{grant=" + grantId + ", tenant=" + tenant + ", region=" + region + "}";
  }
}
