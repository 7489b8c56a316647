package io.srdma.channel.record;

import java.lang.invoke.MethodHandle;

/**
 * intel-ipsec-mb's per-record calls as critical foreign-function downcalls, as {@link
 * GcryptDowncalls} binds libgcrypt's, in the variant {@link LibIpsecMb} chose: the library's
 * streaming GCM API ({@code aes_gcm_init_256_<variant>}, {@code ..._update_...}, {@code
 * ..._finalize_...}), three calls of at most five arguments per record rather than the one call of
 * ten (jnr-ffi makes the same three: {@link LibIpsecMb.Functions}), because Java 17's incubator
 * links a call with arguments on the stack (more than six) through its slow generic invoker (~0.4
 * µs per 64 B record, async-profiler: {@code ProgrammableInvoker.invokeMoves}) — three
 * register-only calls cost less. Bound by {@link #bind}, once per variant (this class never refers
 * to {@link LibIpsecMb}, whose initialisation loaded and checked the library first). Immutable and
 * thread-safe.
 */
final class IpsecMbDowncalls {
  /** System property: {@code jnr} keeps intel-ipsec-mb on jnr-ffi where downcalls work too. */
  static final String PROPERTY = "srdma.ipsecmb.calls";

  /** {@link LibIpsecMb#NAMES}, in its order (not read from there: see above). */
  static final String[] NAMES = {"libIPSec_MB.so.2", "IPSec_MB"};

  /** {@code init(keyData, context, iv, aad, aadLength)}: a 12-byte IV and the associated data. */
  final MethodHandle init;

  /** {@code encUpdate(keyData, context, out, in, length)}. */
  final MethodHandle encUpdate;

  /** {@code encFinalize(keyData, context, tag, tagLength)}. */
  final MethodHandle encFinalize;

  /** {@code decUpdate(keyData, context, out, in, length)}. */
  final MethodHandle decUpdate;

  /** {@code decFinalize(keyData, context, tag, tagLength)}: the tag computed, to compare. */
  final MethodHandle decFinalize;

  private IpsecMbDowncalls(MethodHandle[] h) {
    init = h[0];
    encUpdate = h[1];
    encFinalize = h[2];
    decUpdate = h[3];
    decFinalize = h[4];
  }

  /**
   * The downcalls for {@code variant} ({@code vaes_avx2}, {@code avx_gen4}).
   *
   * @return the handles, or a String saying why they are not bound
   */
  static Object bind(String variant) {
    ForeignBinder b = new ForeignBinder(PROPERTY, NAMES);
    String why = b.unavailable();
    if (why != null) {
      return why;
    }
    try {
      Class<?> l = long.class;
      return new IpsecMbDowncalls(
          new MethodHandle[] {
            b.bindVoid("aes_gcm_init_256_" + variant, l, l, l, l, l),
            b.bindVoid("aes_gcm_enc_256_update_" + variant, l, l, l, l, l),
            b.bindVoid("aes_gcm_enc_256_finalize_" + variant, l, l, l, l),
            b.bindVoid("aes_gcm_dec_256_update_" + variant, l, l, l, l, l),
            b.bindVoid("aes_gcm_dec_256_finalize_" + variant, l, l, l, l)
          });
    } catch (RuntimeException | LinkageError e) {
      return ForeignBinder.failed(e);
    }
  }
}
