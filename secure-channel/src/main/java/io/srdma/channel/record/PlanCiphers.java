package io.srdma.channel.record;

import java.util.function.BiFunction;
import javax.crypto.Cipher;

/**
 * The AES-256-GCM of one {@link RecordSealer} or {@link RecordOpener} for each size class of its
 * {@link AeadPlan}: a JCE {@link Cipher} or a native context ({@link NativeGcm}) for payloads under
 * the plan's bulk size, and one for the rest — the same ones when the plan (for records of at most
 * the sealer's or opener's largest payload) is single.
 *
 * <p>Not thread-safe: one per sealer or opener, used by its thread.
 */
final class PlanCiphers {
  private final int bulkFrom;
  private final int onArrays;
  private final Cipher smallCipher;
  private final NativeGcm smallGcm;
  private final Cipher bulkCipher;
  private final NativeGcm bulkGcm;

  /**
   * The ciphers of {@code plan} for payloads of at most {@code maxPayload} bytes.
   *
   * @param contexts the native context of a native-memory provider for payloads of at most the
   *     given size (a new one, or the opener's workspace's)
   */
  PlanCiphers(
      AeadPlan plan, int maxPayload, BiFunction<AeadProvider, Integer, NativeGcm> contexts) {
    AeadPlan p = plan.upTo(maxPayload);
    this.bulkFrom = p.bulkFrom();
    int smallMax = p.isSingle() ? maxPayload : Math.min(maxPayload, bulkFrom - 1);
    AeadProvider small = p.small();
    this.smallCipher = small.nativeMemory() ? null : small.newCipher();
    this.smallGcm = small.nativeMemory() ? contexts.apply(small, smallMax) : null;
    if (p.isSingle()) {
      this.bulkCipher = smallCipher;
      this.bulkGcm = smallGcm;
    } else {
      AeadProvider bulk = p.bulk();
      this.bulkCipher = bulk.nativeMemory() ? null : bulk.newCipher();
      this.bulkGcm = bulk.nativeMemory() ? contexts.apply(bulk, maxPayload) : null;
    }
    this.onArrays = bulkCipher != null ? maxPayload : smallCipher != null ? smallMax : 0;
  }

  /** The native context for a payload of {@code length} bytes, or null when a JCE one seals it. */
  NativeGcm gcm(int length) {
    return length < bulkFrom ? smallGcm : bulkGcm;
  }

  /** The JCE cipher for a payload of {@code length} bytes, or null when a native one seals it. */
  Cipher cipher(int length) {
    return length < bulkFrom ? smallCipher : bulkCipher;
  }

  /** The largest payload a JCE cipher of the plan seals or opens (on arrays); 0 when none does. */
  int largestOnArrays() {
    return onArrays;
  }
}
