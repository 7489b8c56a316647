package io.srdma.channel.record;

import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Opens owner records ({@link OwnerSealer}). The whole record is first copied out of the (remotely
 * writable) region; then, in order: header shape ({@code MALFORMED}, {@code TRUNCATED}), the
 * owner's Ed25519 signature over binding, offset and sealed record ({@code BAD_SIGNATURE}), a key
 * for its generation ({@code UNKNOWN_EPOCH}), the version against the newest this opener saw at
 * that offset ({@code ROLLED_BACK}), then AES-GCM ({@code AUTH_FAILED}).
 *
 * <p>Versions are remembered per region offset for at most {@value #MAX_TRACKED_OFFSETS} offsets
 * (least recently opened forgotten first). The record buffer and the AES-GCM opener (together over
 * twice the largest record) are made on the first {@link #open}, so an opener that never opens
 * anything (a READ grant never read) holds no buffer of the record size. One instance per reader;
 * not thread-safe.
 */
public final class OwnerOpener {
  /** Offsets whose newest version is remembered. */
  public static final int MAX_TRACKED_OFFSETS = 1 << 16;

  private final IntFunction<DirectionKeys> keysForGeneration;
  private final String tenant;
  private final String region;
  private final int maxPayload;
  private final boolean trackVersions;
  private final Signature verifier;
  private RecordOpener opener; // made on the first open
  private byte[] record;
  private final RecordFlyweight header = new RecordFlyweight();
  private final Map<Long, Long> newest =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
          return size() > MAX_TRACKED_OFFSETS;
        }
      };
  private int lastGeneration = -1;
  private long lastVersion;
  private boolean lastFollowed;
  private int lastLength;

  /**
   * An opener.
   *
   * @param keysForGeneration the region key of a generation, or null when there is none (any more)
   * @param owner the owner's Ed25519 public key
   * @param tenant the region's tenant
   * @param region the region's name
   * @param maxPayload the largest payload of one record
   * @param trackVersions whether to refuse a version below the newest seen at an offset
   */
  public OwnerOpener(
      IntFunction<DirectionKeys> keysForGeneration,
      PublicKey owner,
      String tenant,
      String region,
      int maxPayload,
      boolean trackVersions) {
    this.keysForGeneration = keysForGeneration;
    this.tenant = tenant;
    this.region = region;
    this.maxPayload = maxPayload;
    this.trackVersions = trackVersions;
    RecordOpener.checkMaxPayload(maxPayload);
    this.verifier = OwnerSigning.newSignature();
    try {
      verifier.initVerify(owner);
    } catch (GeneralSecurityException e) {
      throw new RecordException(RecordException.Reason.BAD_ARGUMENT, "not an Ed25519 public key");
    }
  }

  /**
   * Opens the owner record at {@code offset} of {@code source} (at most {@code available} bytes for
   * it) and writes its plaintext at {@code plaintext}'s position (advancing it) when {@code OK}.
   *
   * @param remoteOffset the region offset the record lies at
   */
  public OpenResult open(
      ByteBuffer source, int offset, int available, long remoteOffset, ByteBuffer plaintext) {
    if (offset < 0 || available < 0 || source.limit() - offset < available) {
      return OpenResult.MALFORMED;
    }
    if (available < OwnerSealer.OVERHEAD) {
      return OpenResult.TRUNCATED;
    }
    if (record == null) {
      record = new byte[maxPayload + OwnerSealer.OVERHEAD];
      opener = new RecordOpener(keysForGeneration, maxPayload, false);
    }
    source.get(offset, record, 0, RecordFlyweight.HEADER_LENGTH);
    header.wrap(record, 0);
    int length = header.length();
    if (header.version() != RecordFlyweight.VERSION
        || header.flags() != 0
        || header.reserved() != 0
        || length < 0
        || length > maxPayload) {
      return OpenResult.MALFORMED;
    }
    int total = length + OwnerSealer.OVERHEAD;
    if (available < total) {
      return OpenResult.TRUNCATED;
    }
    if (plaintext.remaining() < length) {
      return OpenResult.NO_ROOM;
    }
    int generation = header.epoch();
    source.get(
        offset + RecordFlyweight.HEADER_LENGTH,
        record,
        RecordFlyweight.HEADER_LENGTH,
        total - RecordFlyweight.HEADER_LENGTH);
    int sealed = length + RecordSealer.OVERHEAD;
    long word = 0;
    for (int i = 0; i < 8; i++) {
      word = (word << 8) | (record[sealed + i] & 0xff);
    }
    long version = word & ~OwnerSealer.FOLLOWED;
    if (version < 1 || generation < 0) {
      return OpenResult.MALFORMED;
    }
    RecordBinding binding = RecordBinding.owner(tenant, region, generation, word);
    try {
      OwnerSigning.update(verifier, binding, remoteOffset, record, sealed);
      if (!verifier.verify(record, sealed + 8, OwnerSigning.SIGNATURE_LENGTH)) {
        return OpenResult.BAD_SIGNATURE;
      }
    } catch (GeneralSecurityException e) {
      return OpenResult.BAD_SIGNATURE;
    }
    lastGeneration = generation; // the owner's: a forged generation never makes a reader wait
    DirectionKeys keys = keysForGeneration.apply(generation);
    if (keys == null || keys.isClosed()) {
      return OpenResult.UNKNOWN_EPOCH;
    }
    Long seen = trackVersions ? newest.get(remoteOffset) : null;
    if (seen != null && version < seen) {
      return OpenResult.ROLLED_BACK;
    }
    OpenResult r =
        opener.open(
            ByteBuffer.wrap(record, 0, sealed), 0, sealed, binding, remoteOffset, plaintext);
    if (r == OpenResult.OK) {
      if (trackVersions) {
        newest.merge(remoteOffset, version, Math::max);
      }
      lastVersion = version;
      lastFollowed = word < 0;
      lastLength = length;
    }
    return r;
  }

  /**
   * Generation of the last record whose owner signature verified (also when it then failed, e.g.
   * {@code UNKNOWN_EPOCH}), or -1.
   */
  public int lastGeneration() {
    return lastGeneration;
  }

  /** Version of the last record opened. */
  public long lastVersion() {
    return lastVersion;
  }

  /**
   * Whether the last record opened says another owner record follows it end to end ({@link
   * OwnerSealer#FOLLOWED}, covered by the signature): never-written bytes after it mean the records
   * were cut short.
   */
  public boolean lastFollowed() {
    return lastFollowed;
  }

  /** Plaintext length of the last record opened. */
  public int lastLength() {
    return lastLength;
  }

  /** Region bytes the last record opened took: payload, header, tag and trailer. */
  public int lastRecordLength() {
    return lastLength + OwnerSealer.OVERHEAD;
  }
}
