package io.srdma.channel.record;

import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Objects;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * Seals records for one direction of one session: AES-256-GCM with nonce {@code prefix ‖ sequence}
 * and associated data {@code header ‖ binding ‖ remote offset}, so a record opens only at the
 * offset, region, tenant and grant it was sealed for. Sequences increase strictly and restart at 0
 * with each new epoch's keys (a new key), so no nonce ever repeats under one key.
 *
 * <p>One instance per writing thread; the {@link Cipher}s and native contexts (of the {@link
 * AeadSelection}'s {@link AeadPlan}: each record is sealed by the provider the plan names for its
 * payload size) and buffers are reused. Seals from a heap plaintext's array (any other plaintext is
 * copied once into this sealer's array, zeroed after the call) into a heap array, then copies the
 * record into the destination (registered, direct) buffer. A writable heap destination — the
 * client's staging on a provider that takes heap memory for the local side ({@code
 * DeviceAttributes.localHeapMemory}: loopback) — gets the record straight into its array, without
 * that copy (unless the plaintext lies in the same array). Sealing straight into the destination by
 * {@code Cipher.doFinal(ByteBuffer, ByteBuffer)} was measured slower for both providers on JDK 17
 * and Java 25, and it allocates: ACCP 2.5.0's AES-GCM has no direct-buffer path (it copies each
 * direct buffer into a new array of its size), SunJCE's copies direct buffers through two new
 * 512-byte arrays. {@code SealPathBenchmark}, 2 vCPU AMD EPYC, medians of 2 alternated runs, GB/s
 * (B/op), a direct plaintext copied into the array and sealed here vs sealed straight into the
 * direct slot (a heap plaintext: the same order):
 *
 * <pre>
 *                    4 KiB                        64 KiB
 *   JDK 17 ACCP     4.4 (140) vs 2.1 (8,380)     9.2 (153) vs 4.7 (70,314)
 *   JDK 17 SunJCE   2.3 (1,064) vs 2.1 (3,144)   3.7 (1,064) vs 2.4 (3,144)
 *   Java 25 ACCP    4.5 (88) vs 2.1 (8,328)      10.1 (88) vs 3.8 (69,760)
 *   Java 25 SunJCE  4.2 (1,040) vs 2.5 (2,112)   9.0 (1,028) vs 3.5 (2,169)
 * </pre>
 *
 * At 64 B the two are within the noise and the direct path still allocates 100-180 B more.
 *
 * <p>With a native-memory provider ({@code openssl}, {@code gcrypt}, {@link
 * AeadProvider#nativeMemory()}) the record is sealed by the library straight from a direct
 * plaintext into a direct destination (a heap plaintext or destination goes through the context's
 * native scratch): no array, no copy, nothing allocated. The context ({@link NativeGcm}) is freed
 * when the sealer is no longer reachable.
 */
public final class RecordSealer {
  /** Bytes a record adds to its payload: header and tag. */
  public static final int OVERHEAD = RecordFlyweight.HEADER_LENGTH + RecordFlyweight.TAG_LENGTH;

  /** Bytes of a record's header (the first bytes of every record). */
  public static final int HEADER_LENGTH = RecordFlyweight.HEADER_LENGTH;

  /** Result of {@link #seal}: the sequence space of this epoch is used up; rekey first. */
  public static final int SEQUENCE_EXHAUSTED = -1;

  /** Result of {@link #seal}: the destination has no room for the record. */
  public static final int NO_ROOM = -2;

  /** Result of {@link #seal}: the payload is larger than this sealer's maximum record payload. */
  public static final int TOO_LARGE = -3;

  static final int AAD_MAX =
      RecordFlyweight.HEADER_LENGTH
          + 8
          + 2
          + 2 * RecordBinding.MAX_NAME_BYTES
          + RecordBinding.OWNER_EXTRA
          + 8;

  private final PlanCiphers ciphers;
  private final int maxPayload;
  private final byte[] input; // staging for plaintext without an accessible array; zeroed after use
  private final byte[] output;
  private final byte[] nonce = new byte[DirectionKeys.NONCE_LENGTH];
  private final byte[] aad = new byte[AAD_MAX];
  private final RecordFlyweight header = new RecordFlyweight();
  private final SealingKeys shared;

  /**
   * A sealer.
   *
   * @param keys the send keys of the current epoch
   * @param maxPayload the largest payload of one record, in bytes
   */
  public RecordSealer(DirectionKeys keys, int maxPayload) {
    this(new SealingKeys(keys), maxPayload);
  }

  /**
   * A sealer that shares its key and sequence counter with other sealers (one per thread).
   *
   * @param shared the key and counter every sealer of this direction uses
   * @param maxPayload the largest plaintext of one record
   */
  public RecordSealer(SealingKeys shared, int maxPayload) {
    this(shared, maxPayload, AeadSelection.current().plan());
  }

  /**
   * A sealer whose cipher comes from {@code aead} rather than the process's {@link AeadSelection}
   * (benchmarks comparing providers).
   *
   * @param shared the key and counter every sealer of this direction uses
   * @param maxPayload the largest plaintext of one record
   * @param aead the AES-GCM provider
   */
  public RecordSealer(SealingKeys shared, int maxPayload, AeadProvider aead) {
    this(shared, maxPayload, AeadPlan.single(aead));
  }

  /**
   * A sealer that seals each record with the provider {@code plan} names for its size.
   *
   * @param shared the key and counter every sealer of this direction uses
   * @param maxPayload the largest plaintext of one record
   * @param plan the AES-GCM provider of each record size
   */
  public RecordSealer(SealingKeys shared, int maxPayload, AeadPlan plan) {
    if (maxPayload < 1 || maxPayload > (1 << 24)) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT, "maxPayload must be 1..16 MiB");
    }
    this.shared = shared;
    this.maxPayload = maxPayload;
    this.ciphers = new PlanCiphers(plan, maxPayload, AeadProvider::newNativeGcm);
    // arrays only as large as the largest record a JCE cipher seals
    int onArrays = ciphers.largestOnArrays();
    this.input = new byte[onArrays];
    this.output = new byte[onArrays == 0 ? RecordFlyweight.HEADER_LENGTH : onArrays + OVERHEAD];
  }

  /** The array a JCE cipher seals plaintext without an accessible array from, for tests. */
  byte[] inputForTest() {
    return input;
  }

  /** Switches to the next epoch's keys; sequences restart at 0 under the new key. */
  public void rekey(DirectionKeys next) {
    shared.rekey(next);
  }

  /** The epoch records are sealed in. */
  public int epoch() {
    return shared.epoch();
  }

  /** Sequence number the next record gets; also the count sealed in this epoch. */
  public long nextSequence() {
    return shared.nextSequence();
  }

  /** The largest payload of one record. */
  public int maxPayload() {
    return maxPayload;
  }

  /**
   * Seals {@code plaintext.remaining()} bytes from its position (which is not moved) into {@code
   * destination} at {@code destinationOffset} (the record must end before the destination's limit,
   * else {@link #NO_ROOM}).
   *
   * @param binding grant, tenant and region of the destination
   * @param remoteOffset the offset in the remote region the record will be written to
   * @return the record's length in bytes, or {@link #NO_ROOM}, {@link #TOO_LARGE}, {@link
   *     #SEQUENCE_EXHAUSTED}
   */
  public int seal(
      ByteBuffer plaintext,
      RecordBinding binding,
      long remoteOffset,
      ByteBuffer destination,
      int destinationOffset) {
    return seal(
        plaintext,
        plaintext.position(),
        plaintext.remaining(),
        binding,
        remoteOffset,
        destination,
        destinationOffset);
  }

  /**
   * Seals the {@code length} bytes of {@code plaintext} from index {@code from} (absolute, as
   * {@link ByteBuffer#get(int, byte[], int, int)}: the range must end within its limit, which is
   * the only bound used; its position is ignored, and neither is moved, so a caller's buffer needs
   * no view) into {@code destination} at {@code destinationOffset}. A heap plaintext is sealed
   * straight from its array; any other is first copied into this sealer's array, once.
   *
   * @param binding grant, tenant and region of the destination
   * @param remoteOffset the offset in the remote region the record will be written to
   * @return the record's length in bytes, or {@link #NO_ROOM}, {@link #TOO_LARGE}, {@link
   *     #SEQUENCE_EXHAUSTED}
   * @throws IndexOutOfBoundsException when {@code from} and {@code length} are not within the
   *     plaintext's limit (nothing sealed, no sequence used)
   */
  public int seal(
      ByteBuffer plaintext,
      int from,
      int length,
      RecordBinding binding,
      long remoteOffset,
      ByteBuffer destination,
      int destinationOffset) {
    Objects.checkFromIndexSize(from, length, plaintext.limit());
    if (length > maxPayload) {
      return TOO_LARGE;
    }
    int recordLength = length + OVERHEAD;
    if (destinationOffset < 0 || destination.limit() - destinationOffset < recordLength) {
      return NO_ROOM;
    }
    SealingKeys.Generation generation = shared.generation();
    long sequence = generation.reserve();
    if (sequence < 0) {
      return SEQUENCE_EXHAUSTED;
    }
    DirectionKeys keys = generation.keys;
    NativeGcm gcm = ciphers.gcm(length);
    if (gcm != null) { // native memory in and out where the buffers are direct: no array between
      header.wrap(output, 0).encode(keys.epoch(), sequence, length);
      int aadLength = associatedData(aad, output, 0, binding, remoteOffset);
      keys.writeNonce(sequence, nonce, 0);
      gcm.seal(
          keys.aesKey(),
          nonce,
          aad,
          aadLength,
          plaintext,
          from,
          length,
          destination,
          destinationOffset + RecordFlyweight.HEADER_LENGTH);
      destination.put(destinationOffset, output, 0, RecordFlyweight.HEADER_LENGTH);
      return recordLength;
    }
    // A writable heap destination (staging of an emulated provider) takes the record straight into
    // its array; any other gets it through this sealer's array and one copy.
    boolean straight =
        destination.hasArray()
            && !(plaintext.hasArray() && plaintext.array() == destination.array());
    byte[] out = straight ? destination.array() : output;
    int outAt = straight ? destination.arrayOffset() + destinationOffset : 0;
    header.wrap(out, outAt).encode(keys.epoch(), sequence, length);
    int aadLength = associatedData(aad, out, outAt, binding, remoteOffset);
    byte[] in;
    int inOffset;
    if (plaintext.hasArray()) { // heap plaintext: sealed straight from its array, no copy
      in = plaintext.array();
      inOffset = plaintext.arrayOffset() + from;
    } else {
      plaintext.get(from, input, 0, length);
      in = input;
      inOffset = 0;
    }
    keys.writeNonce(sequence, nonce, 0);
    Cipher cipher = ciphers.cipher(length);
    try {
      cipher.init(Cipher.ENCRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
      cipher.updateAAD(aad, 0, aadLength);
      cipher.doFinal(in, inOffset, length, out, outAt + RecordFlyweight.HEADER_LENGTH);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to seal", e);
    } finally {
      if (in == input) { // the plaintext's copy outlives no call
        Arrays.fill(input, 0, length, (byte) 0);
      }
    }
    if (!straight) {
      destination.put(destinationOffset, output, 0, recordLength);
    }
    return recordLength;
  }

  /** Writes {@code header ‖ binding ‖ u64 remoteOffset} into {@code aad}; returns its length. */
  static int associatedData(byte[] aad, byte[] record, RecordBinding binding, long remoteOffset) {
    return associatedData(aad, record, 0, binding, remoteOffset);
  }

  /** As {@link #associatedData(byte[], byte[], RecordBinding, long)}, the record at {@code at}. */
  static int associatedData(
      byte[] aad, byte[] record, int at, RecordBinding binding, long remoteOffset) {
    System.arraycopy(record, at, aad, 0, RecordFlyweight.HEADER_LENGTH);
    int n = RecordFlyweight.HEADER_LENGTH;
    binding.copyTo(aad, n);
    n += binding.encodedLength();
    for (int i = 0; i < 8; i++) {
      aad[n + i] = (byte) (remoteOffset >>> (56 - 8 * i));
    }
    return n + 8;
  }
}
