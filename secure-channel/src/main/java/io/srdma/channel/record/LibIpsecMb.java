package io.srdma.channel.record;

import java.nio.ByteBuffer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.Pinned;

/**
 * Intel's Multi-Buffer Crypto for IPsec library ({@code libIPSec_MB.so.2}, intel-ipsec-mb 2.0 or
 * newer: Debian's {@code libipsec-mb2}) through its direct GCM API's streaming calls: a record is
 * sealed or opened by three (init with the IV and the associated data, one update — counter mode
 * and GHASH in one stitched pass — and finalize with the tag). {@link NativeGcm} calls it through
 * {@link #gcm()}.
 *
 * <p>Why a third native library: its {@code vaes_avx2} GCM runs AES and GHASH on 256-bit VAES and
 * VPCLMULQDQ lanes, stitched — AES-256-GCM at ~7 GB/s on one Zen 3 core, where libgcrypt 1.10 (VAES
 * counter mode, GHASH apart) does ~4.5 and OpenSSL 3.0 and AWS-LC (128-bit AES-NI) ~3.4
 * (docs/performance.md, session 41). The library's own dispatcher gives that code only to CPUs that
 * also have GFNI and SHA-NI (its {@code AVX2_T2} type, for other algorithms), which Zen 3 lacks, so
 * this class picks the variant itself from the CPU features the library reports ({@code
 * imb_get_feature_flags}): {@code vaes_avx2} where AVX2, AES-NI, VAES and VPCLMULQDQ are all there,
 * else {@code avx_gen4} (AVX2, AES-NI, PCLMULQDQ: the library's documented direct API), else none.
 * Both are the library's exported functions of the same signature; {@link AeadKnownAnswer} checks
 * the one picked before it is used.
 *
 * <p>The per-arch functions neither check the tag nor report through a result: a call that refuses
 * its arguments (a NULL pointer, a length over 2^39) returns without a word and sets an error that
 * is the process's, not the thread's ({@code imb_get_errno(NULL)} reads one global), so it cannot
 * tell one thread's call from another's. So such arguments never reach it: {@link NativeGcm} passes
 * its own or a checked buffer's addresses and {@code int} lengths within its bounds, and every call
 * here refuses a NULL address or a negative length first (an {@link AeadException}); and in case a
 * call still returned without finishing, the tag's 16 bytes are zeroed before a record and a tag
 * still all zero after it is a failure (a real tag is all zero once in 2^128). The open computes
 * the tag into scratch (zeroed before, checked the same way), compared with the record's in
 * constant time.
 */
final class LibIpsecMb {
  /** The library's soname, then the unversioned link (only there with libipsec-mb-dev). */
  static final String[] NAMES = {"libIPSec_MB.so.2", "IPSec_MB"};

  /** The oldest version accepted, as {@code imb_get_version()} encodes it (major, minor, patch). */
  static final int MINIMUM = 0x020000;

  /** The stitched VAES/VPCLMULQDQ variant. */
  static final String VAES_AVX2 = "vaes_avx2";

  /** The AES-NI/PCLMULQDQ variant (the library's AVX2 type). */
  static final String AVX_GEN4 = "avx_gen4";

  static final long AESNI = 1L << 1;
  static final long PCLMULQDQ = 1L << 2;
  static final long AVX2 = 1L << 6;
  static final long VAES = 1L << 12;
  static final long VPCLMULQDQ = 1L << 13;

  /**
   * Bytes of native memory reserved for the library's {@code struct gcm_key_data} (1,280 in 2.0).
   */
  static final int KEY_DATA = 2048;

  /** Bytes reserved for its {@code struct gcm_context_data} (88 in 2.0). */
  static final int CONTEXT_DATA = 256;

  private static final int ALIGN = 64;
  private static final int LAST_ROUND_KEY = 14 * 16; // in struct gcm_key_data's expanded_keys

  /** {@link Functions}' and {@link PinnedFunctions}' methods and the symbols' stems. */
  private static final String[][] SYMBOLS = {
    {"pre", "aes_gcm_pre_256_"},
    {"init", "aes_gcm_init_256_"},
    {"encUpdate", "aes_gcm_enc_256_update_"},
    {"encFinalize", "aes_gcm_enc_256_finalize_"},
    {"decUpdate", "aes_gcm_dec_256_update_"},
    {"decFinalize", "aes_gcm_dec_256_finalize_"}
  };

  private static final Loaded LOADED = load();
  private static final Gcm DEFAULT;
  private static final String FAILURE;

  static {
    Gcm gcm = null;
    String why = LOADED.failure();
    if (why == null) {
      try {
        gcm = gcmOf(LOADED.variant());
      } catch (RuntimeException | LinkageError e) { // never an Error out of this class's init
        why = e instanceof AeadException ? e.getMessage() : "intel-ipsec-mb: binding failed: " + e;
      }
    }
    DEFAULT = gcm;
    FAILURE = why;
  }

  /** Library-wide calls (public for jnr-ffi). */
  public interface Info {
    String imb_get_version_str();

    int imb_get_version();

    long imb_get_feature_flags();
  }

  /**
   * One variant's GCM calls (public for jnr-ffi), each mapped to {@code aes_gcm_pre_256_<variant>},
   * {@code aes_gcm_init_256_<variant>}, {@code aes_gcm_enc_256_update_<variant>} and so on: {@code
   * pre} expands the key and the GHASH key powers into {@code keyData}; a record is {@code init}
   * (the 12-byte IV and the associated data), one {@code update} and a {@code finalize} writing the
   * tag. The library's one-call API takes ten arguments, past the six jffi calls without an
   * invocation buffer (~250 B allocated per call), so the streaming calls serve here too.
   */
  public interface Functions {
    void pre(long key, long keyData);

    void init(long keyData, long context, long iv, long aad, long aadLength);

    void encUpdate(long keyData, long context, long out, long in, long length);

    void encFinalize(long keyData, long context, long tag, long tagLength);

    void decUpdate(long keyData, long context, long out, long in, long length);

    void decFinalize(long keyData, long context, long tag, long tagLength);
  }

  /** The two updates on a heap array pinned in place (see {@link NativeGcm#PIN_FROM}). */
  public interface PinnedFunctions {
    void encUpdate(long keyData, long context, long out, @Pinned @In ByteBuffer in, long length);

    void decUpdate(long keyData, long context, @Pinned @Out ByteBuffer out, long in, long length);
  }

  private record Loaded(Info info, String name, String version, String variant, String failure) {}

  private LibIpsecMb() {}

  private static Loaded load() {
    StringBuilder why = new StringBuilder();
    for (String name : NAMES) {
      try {
        Info info = GcmLibrary.loader(Info.class).load(name);
        int v = info.imb_get_version();
        if (v < MINIMUM) {
          why.append(name).append(": version ").append(info.imb_get_version_str());
          why.append(" is older than 2.0; ");
          continue;
        }
        String variant = variant(info.imb_get_feature_flags());
        return new Loaded(
            info, name, "intel-ipsec-mb " + info.imb_get_version_str(), variant, null);
      } catch (AeadException e) {
        return new Loaded(null, null, null, null, e.getMessage());
      } catch (LinkageError | RuntimeException e) {
        why.append(name).append(": ").append(e.getMessage()).append("; ");
      }
    }
    return new Loaded(
        null, null, null, null, "intel-ipsec-mb did not load (" + why.toString().trim() + ")");
  }

  /**
   * The fastest variant {@code features} (the library's {@code IMB_FEATURE_*} bits) allow.
   *
   * @throws AeadException saying what the CPU lacks when neither does
   */
  static String variant(long features) {
    if (!has(features, AESNI | PCLMULQDQ | AVX2)) {
      throw new AeadException(
          "intel-ipsec-mb: this CPU lacks AES-NI, PCLMULQDQ or AVX2 (features 0x"
              + Long.toHexString(features)
              + "), which its AES-GCM here needs");
    }
    return has(features, VAES | VPCLMULQDQ) ? VAES_AVX2 : AVX_GEN4;
  }

  /** Whether the CPU has {@code variant}'s instructions, as the library reports them. */
  static boolean cpuHas(String variant) {
    if (LOADED.info() == null) {
      return false;
    }
    long f = LOADED.info().imb_get_feature_flags();
    return has(f, AESNI | PCLMULQDQ | AVX2)
        && (AVX_GEN4.equals(variant) || has(f, VAES | VPCLMULQDQ));
  }

  private static boolean has(long features, long all) {
    return (features & all) == all;
  }

  /**
   * The library as {@link NativeGcm}'s, in the variant this CPU's features pick.
   *
   * @throws AeadException saying why intel-ipsec-mb cannot be used here
   */
  static GcmLibrary gcm() {
    if (DEFAULT == null) {
      throw new AeadException(FAILURE);
    }
    return DEFAULT;
  }

  /**
   * The library in {@code variant} ({@link #VAES_AVX2}, {@link #AVX_GEN4}), for tests that run each
   * one this CPU has.
   *
   * @throws AeadException when the library did not load or the CPU lacks the variant
   */
  static GcmLibrary gcmForTest(String variant) {
    gcm();
    if (!cpuHas(variant)) {
      throw new AeadException("this CPU lacks intel-ipsec-mb's " + variant + " instructions");
    }
    return gcmOf(variant);
  }

  /**
   * {@code variant}'s calls, bound.
   *
   * @throws AeadException when the library lacks them
   */
  private static Gcm gcmOf(String variant) {
    LibraryLoader<Functions> f = GcmLibrary.loader(Functions.class);
    LibraryLoader<PinnedFunctions> p = GcmLibrary.loader(PinnedFunctions.class);
    for (String[] call : SYMBOLS) {
      f.map(call[0], call[1] + variant);
      p.map(call[0], call[1] + variant);
    }
    Functions functions;
    PinnedFunctions pinned;
    try {
      functions = f.load(LOADED.name());
      pinned = p.load(LOADED.name());
    } catch (LinkageError | RuntimeException e) {
      throw new AeadException(
          LOADED.version() + " lacks its " + variant + " GCM calls: " + e.getMessage(), e);
    }
    Object downcalls = IpsecMbDowncalls.bind(variant);
    return new Gcm(
        variant,
        functions,
        pinned,
        downcalls instanceof IpsecMbDowncalls d ? d : null,
        downcalls instanceof String why ? why : null);
  }

  /** Why the default variant's calls are not downcalls, or null when they are. */
  static String notDowncalls() {
    return DEFAULT == null ? FAILURE : DEFAULT.notDowncalls;
  }

  /**
   * A record in three calls each way. A context is {@value #KEY_DATA} bytes of key data then
   * {@value #CONTEXT_DATA} of per-call state, 64-byte aligned, the raw allocation's address in the
   * 8 bytes before it; it is zeroed before it is freed. Records under {@link
   * ForeignBinder#CRITICAL_MAX} (and not pinned) go through the downcalls where they are bound
   * ({@link IpsecMbDowncalls}), the rest through jnr-ffi.
   */
  private static final class Gcm implements GcmLibrary {
    private final String variant;
    private final Functions functions;
    private final PinnedFunctions pinned;
    private final IpsecMbDowncalls downcalls; // null: jnr-ffi only
    private final String notDowncalls; // why downcalls are not bound, or null

    Gcm(
        String variant,
        Functions functions,
        PinnedFunctions pinned,
        IpsecMbDowncalls downcalls,
        String notDowncalls) {
      this.variant = variant;
      this.functions = functions;
      this.pinned = pinned;
      this.downcalls = downcalls;
      this.notDowncalls = notDowncalls;
    }

    @Override
    public String name() {
      return AeadProvider.IPSEC_MB;
    }

    @Override
    public String version() {
      return LOADED.version()
          + ", "
          + variant
          + " (key schedules on native memory, through "
          + through()
          + ")";
    }

    String through() {
      return downcalls != null
          ? ForeignBinder.kind()
          : ForeignBinder.possibleHere() ? "jnr-ffi, not downcalls: " + notDowncalls : "jnr-ffi";
    }

    @Override
    public GcmLibrary jnr() {
      return downcalls == null ? null : new Gcm(variant, functions, pinned, null, "a reference");
    }

    @Override
    public long newContext() {
      long raw = LibCrypto.MEMORY.allocateMemory(KEY_DATA + CONTEXT_DATA + ALIGN + 8, true);
      if (raw == 0) {
        throw new AeadException("intel-ipsec-mb: no native memory for a GCM context");
      }
      long ctx = (raw + 8 + ALIGN - 1) & -ALIGN;
      LibCrypto.MEMORY.putAddress(ctx - 8, raw);
      return ctx;
    }

    @Override
    public void freeContext(long ctx) {
      LibCrypto.MEMORY.setMemory(ctx, KEY_DATA + CONTEXT_DATA, (byte) 0); // the key schedule
      LibCrypto.MEMORY.freeMemory(LibCrypto.MEMORY.getAddress(ctx - 8));
    }

    @Override
    public boolean setKey(long ctx, long key, boolean encrypt) {
      LibCrypto.MEMORY.setMemory(ctx, KEY_DATA, (byte) 0);
      functions.pre(key, ctx); // both directions' schedule, the GHASH key powers
      return written(ctx + LAST_ROUND_KEY); // AES-256's 15th round key: all zero once in 2^128
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
      refuseWhatTheLibraryWould(ctx, nonce, aad, pinnedIn != null || in != 0, out != 0, length);
      long tag = out + length;
      long state = ctx + KEY_DATA;
      clear(tag);
      if (downcalls != null && pinnedIn == null && length < ForeignBinder.CRITICAL_MAX) {
        try {
          downcalls.init.invokeExact(ctx, state, nonce, aad, (long) aadLength);
          downcalls.encUpdate.invokeExact(ctx, state, out, in, (long) length);
          downcalls.encFinalize.invokeExact(ctx, state, tag, 16L);
        } catch (Throwable t) {
          throw ForeignBinder.callFailed("intel-ipsec-mb", t);
        }
      } else {
        functions.init(ctx, state, nonce, aad, aadLength);
        if (pinnedIn != null) {
          pinned.encUpdate(ctx, state, out, pinnedIn, length);
        } else {
          functions.encUpdate(ctx, state, out, in, length);
        }
        functions.encFinalize(ctx, state, tag, 16);
      }
      return written(tag);
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
      refuseWhatTheLibraryWould(ctx, nonce, aad, in != 0, pinnedOut != null || out != 0, length);
      long state = ctx + KEY_DATA;
      clear(word);
      if (downcalls != null && pinnedOut == null && length < ForeignBinder.CRITICAL_MAX) {
        try {
          downcalls.init.invokeExact(ctx, state, nonce, aad, (long) aadLength);
          downcalls.decUpdate.invokeExact(ctx, state, out, in, (long) length);
          downcalls.decFinalize.invokeExact(ctx, state, word, 16L);
        } catch (Throwable t) {
          throw ForeignBinder.callFailed("intel-ipsec-mb", t);
        }
      } else {
        functions.init(ctx, state, nonce, aad, aadLength);
        if (pinnedOut != null) {
          pinned.decUpdate(ctx, state, pinnedOut, in, length);
        } else {
          functions.decUpdate(ctx, state, out, in, length);
        }
        functions.decFinalize(ctx, state, word, 16);
      }
      if (!written(word)) {
        return -1;
      }
      // constant-time: every byte of both tags is read and the differences OR-ed before one test
      long expected = in + length;
      long diff =
          (LibCrypto.MEMORY.getLong(word) ^ LibCrypto.MEMORY.getLong(expected))
              | (LibCrypto.MEMORY.getLong(word + 8) ^ LibCrypto.MEMORY.getLong(expected + 8));
      clear(word); // the right tag of what may be a forgery: not kept
      return diff == 0 ? 1 : 0;
    }

    /**
     * The arguments the library's calls would refuse without a word (a NULL address, a length out
     * of range), refused here first: with these excluded, none of its calls can return having done
     * nothing ({@code hasIn}, {@code hasOut}: an address, or a pinned buffer in its place).
     */
    private static void refuseWhatTheLibraryWould(
        long ctx, long nonce, long aad, boolean hasIn, boolean hasOut, int length) {
      if (ctx == 0 || nonce == 0 || aad == 0 || !hasIn || !hasOut || length < 0) {
        throw new AeadException("intel-ipsec-mb: a NULL address or a negative length reached it");
      }
    }

    private static void clear(long tag) {
      LibCrypto.MEMORY.putLong(tag, 0);
      LibCrypto.MEMORY.putLong(tag + 8, 0);
    }

    /** Whether the call wrote the 16 bytes at {@code tag} (zeroed before it). */
    private static boolean written(long tag) {
      return (LibCrypto.MEMORY.getLong(tag) | LibCrypto.MEMORY.getLong(tag + 8)) != 0;
    }
  }
}
