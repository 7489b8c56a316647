package io.srdma.channel.record;

import com.kenai.jffi.MemoryIO;
import java.nio.ByteBuffer;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.Pinned;

/**
 * OpenSSL's libcrypto (the system's, 3.x or 1.1) through jnr-ffi: the EVP cipher calls that
 * AES-256-GCM over native memory needs, loaded once per JVM. Every argument is a plain address or
 * int (LP64), so no call marshals or allocates. {@link NativeGcm} calls them through {@link
 * #gcm()}; where the JVM offers downcalls a record's calls are downcalls ({@link
 * OpensslDowncalls}).
 */
final class LibCrypto {
  /**
   * The library's sonames, newest first; the unversioned link is only there with libssl-dev. {@link
   * OpensslDowncalls} looks them up in the same order.
   */
  static final String[] NAMES = {"libcrypto.so.3", "libcrypto.so.1.1", "crypto"};

  /** {@code EVP_CTRL_AEAD_GET_TAG}. */
  static final int GET_TAG = 0x10;

  /** {@code EVP_CTRL_AEAD_SET_TAG}. */
  static final int SET_TAG = 0x11;

  static final MemoryIO MEMORY = MemoryIO.getInstance();

  private static final Loaded LOADED = load();
  private static final GcmLibrary JNR = new Gcm();
  private static final GcmLibrary GCM = downcallsOrJnr();

  /** The functions bound (public for jnr-ffi). */
  public interface Functions {
    long EVP_CIPHER_CTX_new();

    void EVP_CIPHER_CTX_free(long ctx);

    long EVP_aes_256_gcm();

    // EVP_CipherInit_ex's sixth argument (int enc) did not reach libcrypto intact through jnr-ffi
    // 2.2.17 here (a context keyed with enc=0 still refused a tag as an encrypting one), so the
    // direction is chosen by the function, with five arguments each.
    int EVP_EncryptInit_ex(long ctx, long cipher, long engine, long key, long iv);

    int EVP_DecryptInit_ex(long ctx, long cipher, long engine, long key, long iv);

    int EVP_EncryptUpdate(long ctx, long out, long outLength, long in, int inLength);

    int EVP_DecryptUpdate(long ctx, long out, long outLength, long in, int inLength);

    int EVP_EncryptFinal_ex(long ctx, long out, long outLength);

    int EVP_DecryptFinal_ex(long ctx, long out, long outLength);

    int EVP_CIPHER_CTX_ctrl(long ctx, int type, int arg, long ptr);

    String OpenSSL_version(int type);
  }

  /**
   * The two calls that take a heap buffer's array pinned in place (JNI critical access: no copy),
   * from its position for its remaining bytes (public for jnr-ffi). A call costs ~75 ns more than
   * one on addresses, so {@link NativeGcm} uses them for large records only.
   */
  public interface PinnedFunctions {
    int EVP_EncryptUpdate(long ctx, long out, long outLength, @Pinned @In ByteBuffer in, int n);

    int EVP_DecryptUpdate(long ctx, @Pinned @Out ByteBuffer out, long outLength, long in, int n);
  }

  private record Loaded(
      Functions functions,
      PinnedFunctions pinned,
      long aes256Gcm,
      String version,
      String failure) {}

  private LibCrypto() {}

  private static Loaded load() {
    StringBuilder why = new StringBuilder();
    for (String name : NAMES) {
      try {
        Functions f = GcmLibrary.loader(Functions.class).load(name);
        PinnedFunctions p = GcmLibrary.loader(PinnedFunctions.class).load(name);
        long cipher = f.EVP_aes_256_gcm();
        if (cipher == 0) {
          why.append(name).append(": EVP_aes_256_gcm() returned NULL; ");
          continue;
        }
        return new Loaded(f, p, cipher, f.OpenSSL_version(0), null);
      } catch (LinkageError | RuntimeException e) {
        why.append(name).append(": ").append(e.getMessage()).append("; ");
      }
    }
    return new Loaded(
        null, null, 0, null, "libcrypto did not load (" + why.toString().trim() + ")");
  }

  /**
   * The bound functions.
   *
   * @throws AeadException saying why libcrypto did not load
   */
  static Functions functions() {
    if (LOADED.functions() == null) {
      throw new AeadException(LOADED.failure());
    }
    return LOADED.functions();
  }

  /**
   * libcrypto as {@link NativeGcm}'s library.
   *
   * @throws AeadException saying why libcrypto did not load
   */
  static GcmLibrary gcm() {
    functions();
    return GCM;
  }

  /**
   * The per-record calls as foreign-function downcalls where {@link OpensslDowncalls} bound them
   * (Java 22+, or Java 17 with the incubator's options), else through jnr-ffi (logged once at info,
   * saying why, where downcalls were possible); named in {@link GcmLibrary#version}.
   */
  private static GcmLibrary downcallsOrJnr() {
    if (LOADED.functions() == null || OpensslDowncalls.unavailable() != null) {
      if (LOADED.functions() != null && ForeignBinder.possibleHere()) {
        org.slf4j.LoggerFactory.getLogger(LibCrypto.class)
            .info("libcrypto's record calls through jnr-ffi: {}", OpensslDowncalls.unavailable());
      }
      return JNR;
    }
    return new Downcalls();
  }

  /** libcrypto through jnr-ffi whatever the Java version (tests compare the two bindings). */
  static GcmLibrary jnrForTest() {
    functions();
    return JNR;
  }

  /**
   * The binding the data path's libcrypto calls go through: {@code FFM downcalls} or {@code jnr-ffi
   * (why)}; null when libcrypto did not load.
   */
  static String binding() {
    if (LOADED.functions() == null) {
      return null;
    }
    return GCM == JNR ? "jnr-ffi (" + OpensslDowncalls.unavailable() + ")" : ForeignBinder.kind();
  }

  /** The calls on pinned heap arrays; only after {@link #functions()} succeeded. */
  static PinnedFunctions pinned() {
    return LOADED.pinned();
  }

  /** {@code EVP_aes_256_gcm()}; only after {@link #functions()} succeeded. */
  static long aes256Gcm() {
    return LOADED.aes256Gcm();
  }

  /** E.g. {@code OpenSSL 3.0.19 27 Jan 2026}; only after {@link #functions()} succeeded. */
  static String version() {
    return LOADED.version();
  }

  /** A record through EVP: init with the nonce, AAD, update, final, then the tag by ctrl. */
  private static class Gcm implements GcmLibrary {
    @Override
    public String name() {
      return AeadProvider.OPENSSL;
    }

    @Override
    public String version() {
      return LibCrypto.version() + " (EVP on native memory, through " + through() + ")";
    }

    String through() {
      // say why the downcalls are not in use (a refused binding is never silent)
      String why = OpensslDowncalls.unavailable();
      return why == null ? "jnr-ffi" : "jnr-ffi, not downcalls: " + why;
    }

    @Override
    public long newContext() {
      long c = functions().EVP_CIPHER_CTX_new();
      if (c == 0) {
        throw new AeadException("libcrypto: EVP_CIPHER_CTX_new failed");
      }
      return c;
    }

    @Override
    public void freeContext(long ctx) {
      functions().EVP_CIPHER_CTX_free(ctx);
    }

    @Override
    public boolean setKey(long ctx, long key, boolean encrypt) {
      Functions f = functions();
      return (encrypt
              ? f.EVP_EncryptInit_ex(ctx, aes256Gcm(), 0, key, 0)
              : f.EVP_DecryptInit_ex(ctx, aes256Gcm(), 0, key, 0))
          == 1;
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
      return f.EVP_EncryptInit_ex(ctx, 0, 0, 0, nonce) == 1
          && f.EVP_EncryptUpdate(ctx, 0, word, aad, aadLength) == 1
          && (pinnedIn != null
                  ? pinned().EVP_EncryptUpdate(ctx, out, word, pinnedIn, length)
                  : f.EVP_EncryptUpdate(ctx, out, word, in, length))
              == 1
          && f.EVP_EncryptFinal_ex(ctx, out + length, word) == 1
          && f.EVP_CIPHER_CTX_ctrl(ctx, GET_TAG, NativeGcm.TAG, out + length) == 1;
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
          f.EVP_DecryptInit_ex(ctx, 0, 0, 0, nonce) == 1
              && f.EVP_DecryptUpdate(ctx, 0, word, aad, aadLength) == 1
              && f.EVP_CIPHER_CTX_ctrl(ctx, SET_TAG, NativeGcm.TAG, in + length) == 1
              && (pinnedOut != null
                      ? pinned().EVP_DecryptUpdate(ctx, pinnedOut, word, in, length)
                      : f.EVP_DecryptUpdate(ctx, out, word, in, length))
                  == 1;
      if (!decrypted) {
        return -1;
      }
      // GCM's final writes no bytes, and checks the tag: the tag's own address is a harmless target
      return f.EVP_DecryptFinal_ex(ctx, in + length, word) == 1 ? 1 : 0;
    }
  }

  /**
   * The same calls as {@link Gcm} through {@link OpensslDowncalls}: the setup calls (context, key,
   * free) stay on jnr-ffi, the per-record ones are downcalls for records under {@link
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
        return (int) OpensslDowncalls.ENCRYPT_INIT.invokeExact(ctx, 0L, 0L, 0L, nonce) == 1
            && (int) OpensslDowncalls.ENCRYPT_UPDATE.invokeExact(ctx, 0L, word, aad, aadLength) == 1
            && (int) OpensslDowncalls.ENCRYPT_UPDATE.invokeExact(ctx, out, word, in, length) == 1
            && (int) OpensslDowncalls.ENCRYPT_FINAL.invokeExact(ctx, out + length, word) == 1
            && (int) OpensslDowncalls.CTRL.invokeExact(ctx, GET_TAG, NativeGcm.TAG, out + length)
                == 1;
      } catch (Throwable t) {
        throw ForeignBinder.callFailed("libcrypto", t);
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
      try {
        boolean decrypted =
            (int) OpensslDowncalls.DECRYPT_INIT.invokeExact(ctx, 0L, 0L, 0L, nonce) == 1
                && (int) OpensslDowncalls.DECRYPT_UPDATE.invokeExact(ctx, 0L, word, aad, aadLength)
                    == 1
                && (int) OpensslDowncalls.CTRL.invokeExact(ctx, SET_TAG, NativeGcm.TAG, in + length)
                    == 1
                && (int) OpensslDowncalls.DECRYPT_UPDATE.invokeExact(ctx, out, word, in, length)
                    == 1;
        if (!decrypted) {
          return -1;
        }
        // GCM's final writes no bytes and checks the tag: the tag's own address is a harmless
        // target
        return (int) OpensslDowncalls.DECRYPT_FINAL.invokeExact(ctx, in + length, word) == 1
            ? 1
            : 0;
      } catch (Throwable t) {
        throw ForeignBinder.callFailed("libcrypto", t);
      }
    }
  }
}
