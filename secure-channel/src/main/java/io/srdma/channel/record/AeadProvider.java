package io.srdma.channel.record;

import java.security.GeneralSecurityException;
import java.security.Provider;
import java.security.Security;
import javax.crypto.Cipher;

/**
 * One source of AES-256-GCM for the data path: the JDK's ({@code SunJCE}), ACCP (Amazon Corretto
 * Crypto Provider, AWS-LC's native AES-GCM) where its native library loads, the system's OpenSSL
 * libcrypto through its EVP interface ({@code openssl}, where {@code libcrypto.so.3} or {@code
 * .1.1} loads), the system's libgcrypt ({@code gcrypt}, where {@code libgcrypt.so.20} 1.8 or newer
 * loads), or the system's intel-ipsec-mb ({@code ipsec-mb}, where {@code libIPSec_MB.so.2} loads on
 * an AVX2 CPU). The first two are JCE providers: ciphers are asked of the {@link Provider} object
 * itself (ACCP is never installed as a JCE provider, so the control plane's crypto — TLS, X25519,
 * HKDF, Ed25519 — is not affected). {@code openssl}, {@code gcrypt} and {@code ipsec-mb} are no JCE
 * providers: the record layer calls them on native memory ({@link #nativeMemory()}), which is what
 * they are for — sealing into a registered slot and opening into a direct buffer without an array
 * between.
 *
 * <p>Immutable and thread-safe; each {@link #newCipher} is a new {@link Cipher} for one thread.
 */
public final class AeadProvider {
  /** The transformation of every data-path cipher. */
  public static final String TRANSFORMATION = "AES/GCM/NoPadding";

  /** Name of the JDK's provider in options, logs and metrics. */
  public static final String JDK = "jdk";

  /** Name of ACCP in options, logs and metrics. */
  public static final String ACCP = "accp";

  /** Name of OpenSSL's libcrypto in options, logs and metrics. */
  public static final String OPENSSL = "openssl";

  /** Name of libgcrypt in options, logs and metrics. */
  public static final String GCRYPT = "gcrypt";

  /** Name of intel-ipsec-mb in options, logs and metrics. */
  public static final String IPSEC_MB = "ipsec-mb";

  private static final String ACCP_CLASS =
      "com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider";

  private final String name;
  private final Provider provider;
  private final String description;
  private final GcmLibrary library; // a native-memory provider's; null for a JCE one

  AeadProvider(String name, Provider provider, String description) {
    this(name, provider, description, null);
  }

  private AeadProvider(String name, Provider provider, String description, GcmLibrary library) {
    this.name = name;
    this.provider = provider;
    this.description = description;
    this.library = library;
  }

  /** A native-memory provider of {@code library}. */
  AeadProvider(GcmLibrary library) {
    this(library.name(), null, library.version(), library);
  }

  /** The JDK's AES-GCM: SunJCE where it is present, else the JCE's first AES/GCM provider. */
  public static AeadProvider jdk() {
    Provider sun = Security.getProvider("SunJCE");
    String version = Runtime.version().feature() + "";
    return new AeadProvider(
        JDK, sun, (sun != null ? "SunJCE" : "the JCE's default AES/GCM") + ", Java " + version);
  }

  /**
   * ACCP, when its classes are on the class path and its native library loaded and passed its own
   * self-tests.
   *
   * @throws AeadException saying why not
   */
  public static AeadProvider accp() {
    Provider p;
    try {
      p = (Provider) Class.forName(ACCP_CLASS).getField("INSTANCE").get(null);
    } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
      throw new AeadException("ACCP is not on the class path (" + e + ")", e);
    }
    try {
      Object error = p.getClass().getMethod("getLoadingError").invoke(p);
      if (error != null) {
        throw new AeadException(
            "ACCP's native library did not load on "
                + System.getProperty("os.name")
                + "/"
                + System.getProperty("os.arch")
                + ": "
                + error);
      }
      p.getClass().getMethod("assertHealthy").invoke(p);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw new AeadException("ACCP is not healthy: " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new AeadException("ACCP's API is not the expected one: " + e, e);
    }
    String version = p.getVersionStr();
    return new AeadProvider(ACCP, p, "ACCP " + version + " (AWS-LC, native)");
  }

  /**
   * OpenSSL's libcrypto (the system's), when it loads and has AES-256-GCM.
   *
   * @throws AeadException saying why not
   */
  public static AeadProvider openssl() {
    return new AeadProvider(LibCrypto.gcm());
  }

  /**
   * libgcrypt (the system's), when {@code libgcrypt.so.20} of version 1.8 or newer loads.
   *
   * @throws AeadException saying why not
   */
  public static AeadProvider gcrypt() {
    return new AeadProvider(LibGcrypt.gcm());
  }

  /**
   * intel-ipsec-mb (the system's {@code libIPSec_MB.so.2}, 2.0 or newer), when it loads and this
   * CPU has AES-NI, PCLMULQDQ and AVX2 (its stitched VAES variant where VAES and VPCLMULQDQ are
   * there too: {@link LibIpsecMb}).
   *
   * @throws AeadException saying why not
   */
  public static AeadProvider ipsecMb() {
    return new AeadProvider(LibIpsecMb.gcm());
  }

  /**
   * Whether this AES-GCM works on native memory through {@link NativeGcm} (openssl, gcrypt,
   * ipsec-mb) rather than a JCE {@link Cipher} on arrays.
   */
  public boolean nativeMemory() {
    return library != null;
  }

  /**
   * {@code jdk}, {@code accp}, {@code openssl}, {@code gcrypt} or {@code ipsec-mb} (or a test's).
   */
  public String name() {
    return name;
  }

  /** Which implementation, with its version, for logs and {@code srdma doctor}. */
  public String description() {
    return description;
  }

  /**
   * A new AES/GCM/NoPadding cipher of this provider, for one thread.
   *
   * @throws AeadException when the provider refuses (it passed its known-answer test, so this means
   *     the JVM changed under it), or is no JCE provider ({@link #nativeMemory()})
   */
  public Cipher newCipher() {
    if (library != null) {
      throw new AeadException(name + " is no JCE provider; the record layer calls it directly");
    }
    try {
      return provider != null
          ? Cipher.getInstance(TRANSFORMATION, provider)
          : Cipher.getInstance(TRANSFORMATION);
    } catch (GeneralSecurityException e) {
      throw new AeadException(name + " has no " + TRANSFORMATION + ": " + e.getMessage(), e);
    }
  }

  /**
   * This provider's library through jnr-ffi where its per-record calls are foreign-function
   * downcalls ({@link GcmLibrary#jnr}), else null: the rate check measures it as the reference that
   * downcalls the JIT has compiled reach.
   */
  AeadProvider jnrReference() {
    GcmLibrary jnr = library == null ? null : library.jnr();
    return jnr == null ? null : new AeadProvider(jnr);
  }

  /**
   * A new native context for records of up to {@code maxPayload} bytes, for one thread.
   *
   * @throws AeadException when this provider is a JCE one, or its library refuses
   */
  NativeGcm newNativeGcm(int maxPayload) {
    if (library == null) {
      throw new AeadException(name + " is a JCE provider; ask it for a Cipher");
    }
    return new NativeGcm(library, maxPayload);
  }

  @Override
  public String toString() {
    return name + " (" + description + ")";
  }
}
