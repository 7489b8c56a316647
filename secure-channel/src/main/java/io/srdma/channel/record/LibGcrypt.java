package io.srdma.channel.record;

import java.nio.ByteBuffer;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.Pinned;

/**
 * libgcrypt (GnuPG's crypto library, the system's {@code libgcrypt.so.20}, 1.8 or newer) through
 * jnr-ffi: the cipher-handle calls AES-256-GCM over native memory needs, loaded once per JVM. Every
 * argument is a plain address, int or size (LP64), so no call marshals or allocates. {@link
 * NativeGcm} calls them through {@link #gcm()}.
 *
 * <p>Why a second native library: libgcrypt 1.10 has VAES/AVX2 AES-CTR and VPCLMULQDQ GHASH, which
 * OpenSSL 3.0 lacks; on an AVX2 CPU without AVX-512 (AMD Zen 3) its AES-256-GCM seals 64 KiB at 4.8
 * GB/s against OpenSSL 3.0's 3.9, and a 64 B record in 130 ns against 290 (docs/performance.md,
 * session 23). {@link AeadSelection}'s rate check decides on each machine.
 *
 * <p>Initialisation: {@code gcry_check_version} is the one call a library inside another program
 * may make (it initialises libgcrypt once; it neither finishes the initialisation nor touches
 * secure memory, which stay the application's), and it refuses versions before {@value #MINIMUM}.
 */
final class LibGcrypt {
  /**
   * The library's sonames; the unversioned link is only there with libgcrypt20-dev. {@link
   * GcryptDowncalls} looks them up in the same order.
   */
  static final String[] NAMES = {"libgcrypt.so.20", "gcrypt"};

  /** The oldest libgcrypt accepted. */
  static final String MINIMUM = "1.8.0";

  static final int CIPHER_AES256 = 9;
  static final int MODE_GCM = 9;

  /** {@code GPG_ERR_CHECKSUM}: the tag did not match. */
  static final int ERR_CHECKSUM = 10;

  /** {@code GPG_ERR_CODE_MASK}. */
  static final int CODE_MASK = 0xFFFF;

  private static final Loaded LOADED = load();
  private static final GcmLibrary JNR = new Gcm();
  private static final GcmLibrary GCM = downcallsOrJnr();

  /** The functions bound (public for jnr-ffi); every {@code int} result is a gcry_error_t. */
  public interface Functions {
    String gcry_check_version(String required);

    int gcry_cipher_open(long handleOut, int algo, int mode, int flags);

    void gcry_cipher_close(long handle);

    int gcry_cipher_setkey(long handle, long key, long keyLength);

    int gcry_cipher_setiv(long handle, long iv, long ivLength);

    int gcry_cipher_authenticate(long handle, long aad, long aadLength);

    int gcry_cipher_encrypt(long handle, long out, long outSize, long in, long inLength);

    int gcry_cipher_decrypt(long handle, long out, long outSize, long in, long inLength);

    int gcry_cipher_gettag(long handle, long tag, long tagLength);

    int gcry_cipher_checktag(long handle, long tag, long tagLength);
  }

  /**
   * The two calls that take a heap buffer's array pinned in place (JNI critical access: no copy),
   * from its position for its remaining bytes (public for jnr-ffi); see {@link NativeGcm#PIN_FROM}.
   */
  public interface PinnedFunctions {
    int gcry_cipher_encrypt(
        long handle, long out, long outSize, @Pinned @In ByteBuffer in, long inLength);

    int gcry_cipher_decrypt(
        long handle, @Pinned @Out ByteBuffer out, long outSize, long in, long inLength);
  }

  private record Loaded(
      Functions functions, PinnedFunctions pinned, String version, String failure) {}

  private LibGcrypt() {}

  private static Loaded load() {
    StringBuilder why = new StringBuilder();
    for (String name : NAMES) {
      try {
        Functions f = GcmLibrary.loader(Functions.class).load(name);
        PinnedFunctions p = GcmLibrary.loader(PinnedFunctions.class).load(name);
        String version = f.gcry_check_version(MINIMUM);
        if (version == null) {
          why.append(name).append(": older than ").append(MINIMUM).append("; ");
          continue;
        }
        return new Loaded(f, p, "libgcrypt " + version, null);
      } catch (LinkageError | RuntimeException e) {
        why.append(name).append(": ").append(e.getMessage()).append("; ");
      }
    }
    return new Loaded(null, null, null, "libgcrypt did not load (" + why.toString().trim() + ")");
  }

  /**
   * The bound functions.
   *
   * @throws AeadException saying why libgcrypt did not load
   */
  static Functions functions() {
    if (LOADED.functions() == null) {
      throw new AeadException(LOADED.failure());
    }
    return LOADED.functions();
  }

  /**
   * libgcrypt as {@link NativeGcm}'s library.
   *
   * @throws AeadException saying why libgcrypt did not load
   */
  static GcmLibrary gcm() {
    functions();
    return GCM;
  }

  /**
   * The per-record calls as foreign-function downcalls where {@link GcryptDowncalls} bound them
   * (Java 22+, or Java 17 with the incubator's options), else through jnr-ffi (logged once at info,
   * saying why, where downcalls were possible); named in {@link GcmLibrary#version}.
   */
  private static GcmLibrary downcallsOrJnr() {
    if (LOADED.functions() == null || GcryptDowncalls.unavailable() != null) {
      if (LOADED.functions() != null && ForeignBinder.possibleHere()) {
        org.slf4j.LoggerFactory.getLogger(LibGcrypt.class)
            .info("libgcrypt's record calls through jnr-ffi: {}", GcryptDowncalls.unavailable());
      }
      return JNR;
    }
    return new Downcalls();
  }

  /** libgcrypt through jnr-ffi whatever the Java version (tests compare the two bindings). */
  static GcmLibrary jnrForTest() {
    functions();
    return JNR;
  }

  /**
   * The binding the data path's libgcrypt calls go through: {@code FFM downcalls} or {@code jnr-ffi
   * (why)}; null when libgcrypt did not load.
   */
  static String binding() {
    if (LOADED.functions() == null) {
      return null;
    }
    return GCM == JNR ? "jnr-ffi (" + GcryptDowncalls.unavailable() + ")" : ForeignBinder.kind();
  }

  /** A record through a cipher handle: IV, AAD, en/decrypt, then get or check the tag. */
  private static class Gcm implements GcmLibrary {
    @Override
    public String name() {
      return AeadProvider.GCRYPT;
    }

    @Override
    public String version() {
      return LOADED.version() + " (cipher handles on native memory, through " + through() + ")";
    }

    String through() {
      // say why the downcalls are not in use (a refused binding is never silent)
      String why = GcryptDowncalls.unavailable();
      return why == null ? "jnr-ffi" : "jnr-ffi, not downcalls: " + why;
    }

    @Override
    public long newContext() {
      long word = LibCrypto.MEMORY.allocateMemory(8, true);
      try {
        int err = functions().gcry_cipher_open(word, CIPHER_AES256, MODE_GCM, 0);
        long handle = LibCrypto.MEMORY.getAddress(word);
        if (err != 0 || handle == 0) {
          throw new AeadException("libgcrypt: gcry_cipher_open(AES256, GCM) failed, error " + err);
        }
        return handle;
      } finally {
        LibCrypto.MEMORY.freeMemory(word);
      }
    }

    @Override
    public void freeContext(long ctx) {
      functions().gcry_cipher_close(ctx); // wipes the handle, key schedule included
    }

    @Override
    public boolean setKey(long ctx, long key, boolean encrypt) {
      return functions().gcry_cipher_setkey(ctx, key, 32) == 0;
    }

    @Override
    public boolean seal(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        ByteBuffer pinnedIn,
        long out,
        int length,
        long word) {
      Functions f = functions();
      return f.gcry_cipher_setiv(ctx, nonce, 12) == 0
          && f.gcry_cipher_authenticate(ctx, aad, aadLength) == 0
          && (pinnedIn != null
                  ? LOADED.pinned().gcry_cipher_encrypt(ctx, out, length, pinnedIn, length)
                  : f.gcry_cipher_encrypt(ctx, out, length, in, length))
              == 0
          && f.gcry_cipher_gettag(ctx, out + length, NativeGcm.TAG) == 0;
    }

    @Override
    public int open(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        long out,
        ByteBuffer pinnedOut,
        int length,
        long word) {
      Functions f = functions();
      boolean decrypted =
          f.gcry_cipher_setiv(ctx, nonce, 12) == 0
              && f.gcry_cipher_authenticate(ctx, aad, aadLength) == 0
              && (pinnedOut != null
                      ? LOADED.pinned().gcry_cipher_decrypt(ctx, pinnedOut, length, in, length)
                      : f.gcry_cipher_decrypt(ctx, out, length, in, length))
                  == 0;
      if (!decrypted) {
        return -1;
      }
      int err = f.gcry_cipher_checktag(ctx, in + length, NativeGcm.TAG); // constant-time compare
      return err == 0 ? 1 : (err & CODE_MASK) == ERR_CHECKSUM ? 0 : -1;
    }
  }

  /**
   * The same calls as {@link Gcm} through {@link GcryptDowncalls}: the setup calls (open, key,
   * close) stay on jnr-ffi, the six per-record ones are downcalls for records under {@link
   * ForeignBinder#CRITICAL_MAX}; longer records, and those whose heap payload the library reads or
   * writes in place (pinned, from {@link NativeGcm#PIN_FROM}), go through jnr-ffi.
   */
  private static final class Downcalls extends Gcm {
    @Override
    String through() {
      return ForeignBinder.kind();
    }

    @Override
    public GcmLibrary jnr() {
      return JNR;
    }

    @Override
    public boolean seal(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        ByteBuffer pinnedIn,
        long out,
        int length,
        long word) {
      if (pinnedIn != null || length >= ForeignBinder.CRITICAL_MAX) {
        return super.seal(ctx, nonce, aad, aadLength, in, pinnedIn, out, length, word);
      }
      try {
        return (int) GcryptDowncalls.SETIV.invokeExact(ctx, nonce, 12L) == 0
            && (int) GcryptDowncalls.AUTHENTICATE.invokeExact(ctx, aad, (long) aadLength) == 0
            && (int) GcryptDowncalls.ENCRYPT.invokeExact(ctx, out, (long) length, in, (long) length)
                == 0
            && (int) GcryptDowncalls.GETTAG.invokeExact(ctx, out + length, (long) NativeGcm.TAG)
                == 0;
      } catch (Throwable t) {
        throw ForeignBinder.callFailed("libgcrypt", t);
      }
    }

    @Override
    public int open(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        long out,
        ByteBuffer pinnedOut,
        int length,
        long word) {
      if (pinnedOut != null || length >= ForeignBinder.CRITICAL_MAX) {
        return super.open(ctx, nonce, aad, aadLength, in, out, pinnedOut, length, word);
      }
      int err;
      try {
        boolean decrypted =
            (int) GcryptDowncalls.SETIV.invokeExact(ctx, nonce, 12L) == 0
                && (int) GcryptDowncalls.AUTHENTICATE.invokeExact(ctx, aad, (long) aadLength) == 0
                && (int)
                        GcryptDowncalls.DECRYPT.invokeExact(
                            ctx, out, (long) length, in, (long) length)
                    == 0;
        if (!decrypted) {
          return -1;
        }
        // constant-time compare
        err = (int) GcryptDowncalls.CHECKTAG.invokeExact(ctx, in + length, (long) NativeGcm.TAG);
      } catch (Throwable t) {
        throw ForeignBinder.callFailed("libgcrypt", t);
      }
      return err == 0 ? 1 : (err & CODE_MASK) == ERR_CHECKSUM ? 0 : -1;
    }
  }
}
