package io.srdma.channel;

import io.srdma.channel.record.OwnerSealer;
import io.srdma.channel.record.RecordSealer;

/**
 * How much region space sealed data takes: a payload is split into records of at most {@code
 * maxRecordPayload} bytes laid end to end, each with {@value #RECORD_OVERHEAD} bytes of header and
 * tag. Records the region's owner seals for readers ({@code io.srdma.host.HostedRegion#seal}) carry
 * a trailer too (version and Ed25519 signature): {@value #OWNER_RECORD_OVERHEAD} bytes each.
 *
 * <p>Thread safety: stateless static arithmetic. Buffers: none.
 */
public final class SealedLayout {
  /** Header and GCM tag of one record. */
  public static final int RECORD_OVERHEAD = RecordSealer.OVERHEAD;

  /** Header, GCM tag and trailer (version, signature) of one owner record. */
  public static final int OWNER_RECORD_OVERHEAD = OwnerSealer.OVERHEAD;

  /** Default largest payload of one record (64 KiB). */
  public static final int DEFAULT_MAX_RECORD_PAYLOAD = 64 * 1024;

  private SealedLayout() {}

  /**
   * Region bytes that {@code payloadLength} bytes of plaintext occupy once sealed.
   *
   * @param payloadLength plaintext bytes, at least 1
   * @param maxRecordPayload the largest payload of one record
   * @return the sealed length
   */
  public static long sealedLength(long payloadLength, int maxRecordPayload) {
    if (payloadLength < 1 || maxRecordPayload < 1) {
      throw new ChannelException(
          ChannelException.Reason.INVALID_ARGUMENT,
          "payload length and record size must be >= 1, got " + payloadLength);
    }
    long records = (payloadLength + maxRecordPayload - 1) / maxRecordPayload;
    return payloadLength + records * RECORD_OVERHEAD;
  }

  /**
   * Region bytes that {@code payloadLength} bytes the owner seals ({@code
   * io.srdma.host.HostedRegion#seal}) occupy: records of at most {@code maxRecordPayload} bytes,
   * {@value #OWNER_RECORD_OVERHEAD} bytes of overhead each.
   *
   * @param payloadLength plaintext bytes, at least 1
   * @param maxRecordPayload the largest payload of one record
   * @return the sealed length
   */
  public static long ownerSealedLength(long payloadLength, int maxRecordPayload) {
    long plain = sealedLength(payloadLength, maxRecordPayload);
    return plain
        + records(payloadLength, maxRecordPayload)
            * (long) (OWNER_RECORD_OVERHEAD - RECORD_OVERHEAD);
  }

  /** Number of records a payload is split into. */
  static int records(long payloadLength, int maxRecordPayload) {
    return (int) ((payloadLength + maxRecordPayload - 1) / maxRecordPayload);
  }

  /**
   * The write unit of a grant: offsets of records inside it are carried in the 24 low bits of the
   * RDMA immediate, in this unit (1 byte for grants up to 16 MiB, then the next power of two).
   *
   * <p>Internal, not API: public only because the host ({@code io.srdma.host}) must derive the same
   * unit as the client; it may change without notice.
   *
   * @param grantLength bytes of the grant, at least 1
   * @return the write unit in bytes, a power of two
   */
  public static long writeUnit(long grantLength) {
    long units = (grantLength + (1L << 24) - 1) >>> 24;
    return units <= 1 ? 1 : Long.highestOneBit(units - 1) << 1;
  }
}
