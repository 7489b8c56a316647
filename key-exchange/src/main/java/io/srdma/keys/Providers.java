package io.srdma.keys;

import java.security.Provider;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.jsse.provider.BouncyCastleJsseProvider;

/**
 * The providers this module uses, held privately: nothing is installed into the global {@code
 * Security} provider list, so other code in the JVM is not affected.
 */
final class Providers {
  /** Bouncy Castle's JCA provider, for PEM and PKCS#8 encryption. */
  static final Provider BC = new BouncyCastleProvider();

  /**
   * Bouncy Castle's JSSE provider on top of the JDK's JCA providers: it exports keying material
   * (RFC 8446 §7.5), and the JDK's intrinsified AES-GCM and EC code stay on the record path.
   */
  static final Provider BCJSSE = new BouncyCastleJsseProvider();

  private Providers() {}
}
