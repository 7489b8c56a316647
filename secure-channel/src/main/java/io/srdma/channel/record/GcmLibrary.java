package io.srdma.channel.record;

import java.nio.ByteBuffer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.LibraryOption;

/**
 * A native AES-256-GCM library behind {@link NativeGcm}: the few calls one record needs, on native
 * addresses (96-bit nonce, 128-bit tag). {@link NativeGcm} checks every range, owns the memory and
 * wipes it; an implementation only calls its library ({@link LibCrypto}: OpenSSL's EVP interface,
 * {@link LibGcrypt}: libgcrypt's cipher handles).
 *
 * <p>Implementations are stateless and thread-safe; a context is used by one thread at a time.
 */
interface GcmLibrary {
  /**
   * The loader an implementation binds its library's {@code functions} with: calls do not save
   * errno (these libraries report through their results only, and saving it costs every call a
   * thread-local store: ~3 % of a 64 B seal, JMH).
   */
  static <T> LibraryLoader<T> loader(Class<T> functions) {
    return LibraryLoader.create(functions)
        .option(LibraryOption.IgnoreError, true)
        .failImmediately();
  }

  /** {@code openssl} or {@code gcrypt}: the provider's name in options, logs and metrics. */
  String name();

  /** The library and its version, for logs and {@code srdma doctor}. */
  String version();

  /**
   * The same library through jnr-ffi when this one makes its per-record calls as foreign-function
   * downcalls, else null: the rate check's reference for downcalls the JIT has not compiled yet
   * ({@link AeadRateCheck}).
   */
  default GcmLibrary jnr() {
    return null;
  }

  /**
   * A new AES-256-GCM context.
   *
   * @throws AeadException when the library refuses one
   */
  long newContext();

  /** Frees {@code ctx}; the library cleanses the key schedule it held. */
  void freeContext(long ctx);

  /** Loads the 32 key bytes at {@code key} into {@code ctx} for {@code encrypt}ing or opening. */
  boolean setKey(long ctx, long key, boolean encrypt);

  /**
   * Seals {@code length} bytes at {@code in} (or of {@code pinnedIn}, position to limit, when it is
   * not null) to {@code out}: ciphertext, then the tag at {@code out + length}.
   *
   * @param word 16 bytes of native scratch the call may use
   * @return false when the library reported a failure
   */
  boolean seal(
      long ctx,
      long nonce,
      long aad,
      int aadLength,
      long in,
      ByteBuffer pinnedIn,
      long out,
      int length,
      long word);

  /**
   * Opens {@code length} bytes of ciphertext at {@code in}, whose tag follows at {@code in +
   * length}, into {@code out} (or {@code pinnedOut}, position to limit, when it is not null).
   *
   * @param word 16 bytes of native scratch the call may use
   * @return 1 when the tag was right, 0 when it was wrong (the caller wipes what was written), -1
   *     when the library reported another failure
   */
  int open(
      long ctx,
      long nonce,
      long aad,
      int aadLength,
      long in,
      long out,
      ByteBuffer pinnedOut,
      int length,
      long word);
}
