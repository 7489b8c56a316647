package io.srdma.keys;

import java.security.Provider;
import org.bouncycastle.jce.provider.BouncyCastleProvider;

/**
 * The providers this module uses, held privately: nothing is installed into the global {@code
 * Security} provider list, so other code in the JVM is not affected.
 */
final class Providers {
  /** Bouncy Castle's JCA provider, for PEM and PKCS#8 encryption. */
  static final Provider BC = new BouncyCastleProvider();

  private Providers() {}
}
