package io.srdma.channel.record;

import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;

/**
 * Seals the records the region's owner (the host) publishes for readers. An owner record is a
 * sealed record ({@link RecordSealer}, region key of one generation, {@link RecordBinding#owner}
 * binding with that generation and the record's version word) followed by a trailer {@code u64
 * version word ‖ Ed25519 signature}: the signature covers the binding, the region offset and the
 * sealed record, and only the host holds its private key. The version word is the version (bits
 * 0–62) and, in bit 63 ({@link #FOLLOWED}), whether another owner record follows this one end to
 * end: a reader that finds never-written bytes after a record that says one follows knows the
 * records were cut short, not ended. The record is sealed and signed in a private buffer and copied
 * into the (remotely writable) destination only then, so what is signed is what was sealed.
 *
 * <p>One instance per generation, used under its owner's lock: not thread-safe.
 */
public final class OwnerSealer {
  /** Bytes of the trailer: version and signature. */
  public static final int TRAILER_LENGTH = 8 + OwnerSigning.SIGNATURE_LENGTH;

  /** Bit 63 of the version word: another owner record follows this one end to end. */
  public static final long FOLLOWED = 1L << 63;

  /** Bytes an owner record adds to its payload: header, tag and trailer. */
  public static final int OVERHEAD = RecordSealer.OVERHEAD + TRAILER_LENGTH;

  private final RecordSealer sealer;
  private final Signature signer;
  private final ByteBuffer staging;
  private final String tenant;
  private final String region;
  private final int generation;
  private final int maxPayload;

  /**
   * A sealer.
   *
   * @param keys the region key of one generation (its epoch is the generation)
   * @param signingKey the owner's Ed25519 private key
   * @param tenant the region's tenant
   * @param region the region's name
   * @param maxPayload the largest payload of one record
   */
  public OwnerSealer(
      DirectionKeys keys, PrivateKey signingKey, String tenant, String region, int maxPayload) {
    this.sealer = new RecordSealer(keys, maxPayload);
    this.generation = keys.epoch();
    this.tenant = tenant;
    this.region = region;
    this.maxPayload = maxPayload;
    this.staging = ByteBuffer.allocate(maxPayload + OVERHEAD);
    this.signer = OwnerSigning.newSignature();
    try {
      signer.initSign(signingKey);
    } catch (GeneralSecurityException e) {
      throw new RecordException(RecordException.Reason.BAD_ARGUMENT, "not an Ed25519 signing key");
    }
  }

  /** The generation records are sealed under. */
  public int generation() {
    return generation;
  }

  /**
   * Seals and signs {@code plaintext.remaining()} bytes (position not moved) into {@code
   * destination} at {@code destinationOffset}.
   *
   * @param version the record's version, 1 to 2^63 - 1; readers refuse a version below the newest
   *     they opened at that offset
   * @param followed whether another owner record follows this one end to end
   * @param remoteOffset the offset in the region the record is placed at
   * @return the record's length ({@code payload + }{@value #OVERHEAD}), or {@link
   *     RecordSealer#NO_ROOM}, {@link RecordSealer#TOO_LARGE}, {@link
   *     RecordSealer#SEQUENCE_EXHAUSTED}
   */
  public int seal(
      ByteBuffer plaintext,
      long version,
      boolean followed,
      long remoteOffset,
      ByteBuffer destination,
      int destinationOffset) {
    if (version < 1) {
      throw new IllegalArgumentException("owner record version " + version + " out of 1..2^63-1");
    }
    long word = followed ? version | FOLLOWED : version;
    int length = plaintext.remaining();
    if (length > maxPayload) {
      return RecordSealer.TOO_LARGE;
    }
    if (destinationOffset < 0 || destination.limit() - destinationOffset < length + OVERHEAD) {
      return RecordSealer.NO_ROOM;
    }
    RecordBinding binding = RecordBinding.owner(tenant, region, generation, word);
    byte[] out = staging.array();
    int n = sealer.seal(plaintext, binding, remoteOffset, staging, 0);
    if (n < 0) {
      return n;
    }
    for (int i = 0; i < 8; i++) {
      out[n + i] = (byte) (word >>> (56 - 8 * i));
    }
    try {
      OwnerSigning.update(signer, binding, remoteOffset, out, n);
      int s = signer.sign(out, n + 8, OwnerSigning.SIGNATURE_LENGTH);
      if (s != OwnerSigning.SIGNATURE_LENGTH) {
        throw new IllegalStateException("Ed25519 signature of " + s + " bytes");
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 failed to sign", e);
    }
    int total = n + TRAILER_LENGTH;
    destination.put(destinationOffset, out, 0, total);
    java.util.Arrays.fill(out, 0, total, (byte) 0);
    return total;
  }
}
