package io.srdma.channel.record;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;
import java.util.Objects;
import javax.crypto.SecretKey;

/**
 * AES-256-GCM (96-bit nonce, 128-bit tag) of one thread through a native library ({@link
 * GcmLibrary}: OpenSSL's libcrypto or libgcrypt), reading and writing native memory where the
 * buffers are direct: a record is sealed straight into a registered staging slot and opened
 * straight into a direct destination, with no array between (the JCE's GCM works on arrays, so a
 * direct slot costs it one more copy per record). Heap buffers go through this object's native
 * scratch, and no plaintext stays there after a call. Nothing is allocated per record.
 *
 * <p>Every index is checked before any native call: a range outside a buffer's limit is an {@link
 * IndexOutOfBoundsException}, a read-only destination a {@link ReadOnlyBufferException}, and
 * nothing is written. The key is loaded into the library's context when it changes (by identity)
 * and its bytes are wiped from the scratch and the Java copy at once; the context holds the key
 * schedule until the next key or {@link #close()}, whose free ({@code EVP_CIPHER_CTX_free}, {@code
 * gcry_cipher_close}) cleanses it (a {@link Cleaner} frees a context that was never closed).
 *
 * <p>Not thread-safe: one instance per thread, like a {@code Cipher}.
 */
final class NativeGcm implements AutoCloseable {
  /** Bytes of the tag after the ciphertext. */
  static final int TAG = 16;

  private static final Cleaner CLEANER =
      Cleaner.create(
          r -> {
            Thread t = new Thread(r, "srdma-native-gcm-cleaner");
            t.setDaemon(true);
            return t;
          });

  private static final byte[] ZEROS = new byte[1024];
  private static final int KEY_AT = 0;
  private static final int NONCE_AT = 32;
  private static final int OUTL_AT = 48;
  private static final int AAD_AT = 64;
  private static final int DATA_AT = AAD_AT + ((RecordSealer.AAD_MAX + 63) & ~63);

  /**
   * Heap payloads from this size up are read (sealing) or written (opening) by the library in their
   * own array, pinned for the call, instead of through the scratch: the pinned call costs ~75 ns
   * more, a 64 KiB copy ~1.3 µs (Pin prototype, performance.md session 21).
   */
  static final int PIN_FROM = 16 * 1024;

  private final GcmLibrary library;
  private final int maxPayload;
  private final ByteBuffer scratch; // key | nonce | outl | aad | data (a payload and its tag)
  private final long base;
  private final Cleaner.Cleanable freeContext;
  private long ctx;
  private SecretKey loaded;
  // A view of the last heap array pinned, kept so that pinning a caller's array allocates nothing
  // and never moves the caller's own buffer (which another thread may be sealing from too).
  private byte[] viewed;
  private ByteBuffer view;
  private ByteBuffer lastBuffer; // address cache, see address()
  private long lastAddress;

  /**
   * A context of {@code library} for records of up to {@code maxPayload} bytes.
   *
   * @throws AeadException when the library refuses a context
   */
  NativeGcm(GcmLibrary library, int maxPayload) {
    this.library = library;
    this.maxPayload = maxPayload;
    this.scratch = ByteBuffer.allocateDirect(DATA_AT + maxPayload + TAG);
    this.base = LibCrypto.MEMORY.getDirectBufferAddress(scratch);
    long c = library.newContext();
    this.ctx = c;
    this.freeContext = CLEANER.register(this, () -> library.freeContext(c));
  }

  /** The library's name ({@code openssl}, {@code gcrypt}), as its provider's. */
  String libraryName() {
    return library.name();
  }

  /** The largest payload of one call. */
  int maxPayload() {
    return maxPayload;
  }

  /**
   * Seals {@code length} bytes of {@code in} from index {@code from} into {@code out} at {@code
   * outAt}: ciphertext then tag, {@code length + 16} bytes. Neither buffer's position moves. A heap
   * {@code in} copied through the scratch leaves no plaintext there once this returns or throws:
   * only the bytes it used are zeroed, and only when what is left there is not ciphertext.
   *
   * @throws AeadException when the library reports a failure
   */
  void seal(
      SecretKey key,
      byte[] nonce,
      byte[] aad,
      int aadLength,
      ByteBuffer in,
      int from,
      int length,
      ByteBuffer out,
      int outAt) {
    Objects.checkFromIndexSize(from, length, in.limit());
    Objects.checkFromIndexSize(outAt, length + TAG, out.limit());
    checkCall(aadLength, length, out);
    long data = base + DATA_AT;
    long inAddr = 0;
    long outAddr = out.isDirect() ? address(out) + outAt : data;
    ByteBuffer pinnedIn = null;
    if (!in.isDirect() && in.hasArray() && length >= PIN_FROM && outAddr != data) {
      pinnedIn = view(in.array(), in.arrayOffset() + from, length);
    } else if (in.isDirect()) {
      inAddr = LibCrypto.MEMORY.getDirectBufferAddress(in) + from; // a caller's: not remembered
      if (inAddr != outAddr && inAddr < outAddr + length + TAG && outAddr < inAddr + length) {
        scratch.put(DATA_AT, in, from, length); // partial overlap: GCM needs in == out or apart
        inAddr = data;
      }
    } else {
      scratch.put(DATA_AT, in, from, length);
      inAddr = data;
    }
    boolean sealed = false;
    try {
      begin(key, nonce, aad, aadLength, true);
      if (!library.seal(
          ctx,
          base + NONCE_AT,
          base + AAD_AT,
          aadLength,
          inAddr,
          pinnedIn,
          outAddr,
          length,
          base + OUTL_AT)) {
        throw new AeadException(library.name() + " failed to seal");
      }
      if (outAddr == data) {
        out.put(outAt, scratch, DATA_AT, length + TAG);
      }
      sealed = true;
    } finally {
      // a copy of the plaintext in the scratch outlives no call: sealed in place there, it is now
      // ciphertext; sealed elsewhere (or not sealed at all), it is the plaintext itself
      if (inAddr == data && (outAddr != data || !sealed)) {
        wipe(DATA_AT, length);
      }
      Reference.reachabilityFence(this); // the Cleaner frees the context only after the call
      Reference.reachabilityFence(in);
      Reference.reachabilityFence(out);
    }
  }

  /**
   * Copies {@code length + 16} bytes (ciphertext then tag) of {@code sealed} from index {@code at}
   * into this object's native memory — once, so the bytes authenticated are the bytes decrypted
   * even if a peer keeps writing into {@code sealed} — and opens them into {@code out} at {@code
   * outAt}. On a wrong tag whatever was decrypted into {@code out} is zeroed; a heap {@code out}
   * gets the plaintext through the scratch, whose bytes of it are zeroed before this returns or
   * throws.
   *
   * @return whether the tag was right
   * @throws AeadException when the library reports a failure other than a wrong tag
   */
  boolean open(
      SecretKey key,
      byte[] nonce,
      byte[] aad,
      int aadLength,
      ByteBuffer sealed,
      int at,
      int length,
      ByteBuffer out,
      int outAt) {
    Objects.checkFromIndexSize(at, length + TAG, sealed.limit());
    Objects.checkFromIndexSize(outAt, length, out.limit());
    checkCall(aadLength, length, out);
    long data = base + DATA_AT;
    scratch.put(DATA_AT, sealed, at, length + TAG);
    long outAddr = out.isDirect() ? address(out) + outAt : data;
    ByteBuffer pinnedOut =
        !out.isDirect() && out.hasArray() && length >= PIN_FROM
            ? view(out.array(), out.arrayOffset() + outAt, length)
            : null;
    try {
      begin(key, nonce, aad, aadLength, false);
      int opened =
          library.open(
              ctx,
              base + NONCE_AT,
              base + AAD_AT,
              aadLength,
              data,
              outAddr,
              pinnedOut,
              length,
              base + OUTL_AT);
      if (opened != 1) {
        if (pinnedOut != null) { // nothing unauthenticated stays
          Arrays.fill(
              out.array(), out.arrayOffset() + outAt, out.arrayOffset() + outAt + length, (byte) 0);
        }
        LibCrypto.MEMORY.setMemory(outAddr, length, (byte) 0);
        if (opened < 0) {
          throw new AeadException(library.name() + " failed to open");
        }
        return false;
      }
      if (outAddr == data && pinnedOut == null) {
        out.put(outAt, scratch, DATA_AT, length);
      }
      return true;
    } finally {
      if (outAddr == data && pinnedOut == null) {
        wipe(DATA_AT, length); // no plaintext left for the next, whatever the call threw
      }
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(sealed);
      Reference.reachabilityFence(out);
    }
  }

  /**
   * The address of a direct destination: the last one is remembered (a sealer's staging ring, an
   * opening thread's plaintext buffer), so a record costs no JNI call for it. Remembering keeps
   * that one buffer reachable until another takes its place or {@link #close()}: its address stays
   * valid while it is cached.
   */
  private long address(ByteBuffer direct) {
    if (direct != lastBuffer) {
      lastAddress = LibCrypto.MEMORY.getDirectBufferAddress(direct);
      lastBuffer = direct;
    }
    return lastAddress;
  }

  /** Zeroes {@code n} bytes of the scratch from {@code at}. */
  private void wipe(int at, int n) {
    if (n <= ZEROS.length) {
      scratch.put(at, ZEROS, 0, n);
    } else {
      LibCrypto.MEMORY.setMemory(base + at, n, (byte) 0);
    }
  }

  /** {@link #view} of {@code array} from {@code at} for {@code length} bytes. */
  private ByteBuffer view(byte[] array, int at, int length) {
    if (array != viewed) {
      view = ByteBuffer.wrap(array);
      viewed = array;
    }
    view.clear();
    return view.position(at).limit(at + length);
  }

  /** A read-only view of the native scratch, for tests that look for plaintext left behind. */
  ByteBuffer scratchForTest() {
    return scratch.asReadOnlyBuffer();
  }

  /** Wipes the scratch and frees the context (which cleanses the key schedule). Idempotent. */
  @Override
  public void close() {
    if (ctx != 0) {
      ctx = 0;
      loaded = null;
      viewed = null;
      view = null;
      lastBuffer = null;
      LibCrypto.MEMORY.setMemory(base, scratch.capacity(), (byte) 0);
      freeContext.clean();
    }
  }

  private void checkCall(int aadLength, int length, ByteBuffer out) {
    if (ctx == 0) {
      throw new IllegalStateException("this AES-GCM context is closed");
    }
    if (out.isReadOnly()) {
      throw new ReadOnlyBufferException();
    }
    if (length > maxPayload) {
      throw new IndexOutOfBoundsException(
          "payload of " + length + " bytes over this context's " + maxPayload);
    }
    Objects.checkFromIndexSize(0, aadLength, RecordSealer.AAD_MAX);
  }

  /** Loads the key when it changed; copies the nonce and associated data into the scratch. */
  private void begin(SecretKey key, byte[] nonce, byte[] aad, int aadLength, boolean encrypt) {
    if (nonce.length != 12) {
      throw new AeadException("AES-GCM nonce must be 12 bytes, was " + nonce.length);
    }
    if (key != loaded) {
      loaded = null;
      byte[] k = key.getEncoded();
      try {
        if (k == null || k.length != 32) {
          throw new AeadException("not an AES-256 key");
        }
        scratch.put(KEY_AT, k, 0, 32);
        if (!library.setKey(ctx, base + KEY_AT, encrypt)) {
          throw new AeadException(library.name() + " refused the key");
        }
      } finally {
        wipe(KEY_AT, 32);
        if (k != null) {
          Arrays.fill(k, (byte) 0);
        }
      }
      loaded = key;
    }
    Objects.checkFromIndexSize(0, aadLength, aad.length);
    scratch.put(NONCE_AT, nonce, 0, 12); // plain Java copies: no JNI call per record
    scratch.put(AAD_AT, aad, 0, aadLength);
  }
}
