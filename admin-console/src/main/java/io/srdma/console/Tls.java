package io.srdma.console;

import io.vertx.core.net.KeyCertOptions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.KeyManagerFactory;

/** Turns the configured credential into Vert.x key options, in memory (no key file written). */
final class Tls {
  private Tls() {}

  static KeyCertOptions keyCertOptions(ConsoleConfig config) {
    char[] pw = new char[32];
    SecureRandom random = new SecureRandom();
    for (int i = 0; i < pw.length; i++) {
      pw[i] = (char) ('a' + random.nextInt(26));
    }
    try {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry(
          "console",
          config.credential().privateKey(),
          pw,
          config.certificates().toArray(new X509Certificate[0]));
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, pw);
      return KeyCertOptions.wrap(kmf);
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new ConsoleException("cannot use the console certificate: " + e.getMessage(), e);
    } finally {
      Arrays.fill(pw, '\0');
    }
  }
}
