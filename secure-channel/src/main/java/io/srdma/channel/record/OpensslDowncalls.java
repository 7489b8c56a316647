package io.srdma.channel.record;

import java.lang.invoke.MethodHandle;

/**
 * OpenSSL libcrypto's per-record EVP calls bound as foreign-function downcalls (Java 22+'s {@code
 * java.lang.foreign} with {@code Linker.Option.critical}, or Java 17's {@code
 * jdk.incubator.foreign} trivial calls, through {@link ForeignBinder}): the calls are short, never
 * block and never call back, so they run without a thread-state transition, where jnr-ffi's JNI
 * stubs take one per call — ten calls per 64 B record sealed and opened. Bound from their C
 * prototypes: pointers ({@code EVP_CIPHER_CTX *}, buffers, the {@code int *} out-length) as {@code
 * long} (LP64), each C {@code int} argument as {@code int}, the {@code int} result.
 *
 * <p>Bound where the JVM offers downcalls (Java 22+, or Java 17 started with {@code --add-modules
 * jdk.incubator.foreign --enable-native-access=ALL-UNNAMED}) unless {@value #PROPERTY}{@code =jnr};
 * otherwise {@link #unavailable()} says why and libcrypto is called through jnr-ffi. Used only once
 * {@link LibCrypto} loaded the same library (this class never refers to that one, so their
 * initialisations cannot wait on each other). Which binding is in use is part of the provider's
 * version string ({@code srdma doctor}, {@code srdma bench}, the start-up log). Immutable and
 * thread-safe.
 */
final class OpensslDowncalls {
  /** System property: {@code jnr} keeps libcrypto on jnr-ffi where downcalls work too. */
  static final String PROPERTY = "srdma.openssl.calls";

  /** {@link LibCrypto#NAMES}, in its order (not read from there: see above). */
  static final String[] NAMES = {"libcrypto.so.3", "libcrypto.so.1.1", "crypto"};

  private static final String UNAVAILABLE;

  /** {@code int EVP_EncryptInit_ex(ctx, const EVP_CIPHER *, ENGINE *, key, iv)}. */
  static final MethodHandle ENCRYPT_INIT;

  /** {@code int EVP_DecryptInit_ex(ctx, const EVP_CIPHER *, ENGINE *, key, iv)}. */
  static final MethodHandle DECRYPT_INIT;

  /** {@code int EVP_EncryptUpdate(ctx, unsigned char *out, int *outl, in, int inl)}. */
  static final MethodHandle ENCRYPT_UPDATE;

  /** {@code int EVP_DecryptUpdate(ctx, unsigned char *out, int *outl, in, int inl)}. */
  static final MethodHandle DECRYPT_UPDATE;

  /** {@code int EVP_EncryptFinal_ex(ctx, unsigned char *out, int *outl)}. */
  static final MethodHandle ENCRYPT_FINAL;

  /** {@code int EVP_DecryptFinal_ex(ctx, unsigned char *out, int *outl)}. */
  static final MethodHandle DECRYPT_FINAL;

  /** {@code int EVP_CIPHER_CTX_ctrl(ctx, int type, int arg, void *ptr)}. */
  static final MethodHandle CTRL;

  static {
    MethodHandle[] h = new MethodHandle[7];
    // LibCrypto's names in its order, so dlopen finds the library jnr-ffi loaded (the same
    // mapping); these calls are used only once that one loaded
    ForeignBinder b = new ForeignBinder(PROPERTY, NAMES);
    String why = b.unavailable();
    if (why == null) {
      try {
        Class<?> l = long.class;
        Class<?> i = int.class;
        h[0] = b.bind("EVP_EncryptInit_ex", l, l, l, l, l);
        h[1] = b.bind("EVP_DecryptInit_ex", l, l, l, l, l);
        h[2] = b.bind("EVP_EncryptUpdate", l, l, l, l, i);
        h[3] = b.bind("EVP_DecryptUpdate", l, l, l, l, i);
        h[4] = b.bind("EVP_EncryptFinal_ex", l, l, l);
        h[5] = b.bind("EVP_DecryptFinal_ex", l, l, l);
        h[6] = b.bind("EVP_CIPHER_CTX_ctrl", l, i, i, l);
      } catch (RuntimeException | LinkageError e) {
        why = ForeignBinder.failed(e);
        h = new MethodHandle[7];
      }
    }
    UNAVAILABLE = why;
    ENCRYPT_INIT = h[0];
    DECRYPT_INIT = h[1];
    ENCRYPT_UPDATE = h[2];
    DECRYPT_UPDATE = h[3];
    ENCRYPT_FINAL = h[4];
    DECRYPT_FINAL = h[5];
    CTRL = h[6];
  }

  private OpensslDowncalls() {}

  /** Why the downcalls are not bound, or null when they are. */
  static String unavailable() {
    return UNAVAILABLE;
  }
}
