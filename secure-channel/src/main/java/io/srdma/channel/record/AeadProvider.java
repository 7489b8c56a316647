package io.srdma.channel.record;

import java.security.GeneralSecurityException;
import java.security.Provider;
import java.security.Security;
import javax.crypto.Cipher;

/**
 * One source of AES-256-GCM ciphers for the data path: the JDK's ({@code SunJCE}) or ACCP (Amazon
 * Corretto Crypto Provider, AWS-LC's native AES-GCM) where its native library loads. Ciphers are
 * asked of the {@link Provider} object itself: ACCP is never installed as a JCE provider, so the
 * control plane's crypto (TLS, X25519, HKDF, Ed25519) is not affected.
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

  private static final String ACCP_CLASS =
      "com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider";

  private final String name;
  private final Provider provider;
  private final String description;

  AeadProvider(String name, Provider provider, String description) {
    this.name = name;
    this.provider = provider;
    this.description = description;
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

  /** {@code jdk} or {@code accp} (or a test's name). */
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
   *     the JVM changed under it)
   */
  public Cipher newCipher() {
    try {
      return provider != null
          ? Cipher.getInstance(TRANSFORMATION, provider)
          : Cipher.getInstance(TRANSFORMATION);
    } catch (GeneralSecurityException e) {
      throw new AeadException(name + " has no " + TRANSFORMATION + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    return name + " (" + description + ")";
  }
}
