package io.srdma.server;

import io.srdma.console.ConsoleConfig;
import io.srdma.console.ConsoleException;
import io.srdma.keys.Credential;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.Pem;
import java.security.PrivateKey;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;

/** The {@code console:} section's part of {@link ServeChecks}: its files and settings. */
final class ConsoleChecks {
  private ConsoleChecks() {}

  /**
   * Checks the {@code console:} section's files (certificate chain, key and passphrase, metrics
   * token) and settings; adds every error and returns null if there was one.
   */
  static ConsoleConfig prepare(ServeConfig c, List<String> errors) {
    int before = errors.size();
    char[] pass = null;
    if (c.consoleKeyPassphraseFile != null) {
      try {
        pass = Passphrases.read(c.consoleKeyPassphraseFile);
      } catch (KeyExchangeException e) {
        errors.add(c.where("console.key-passphrase-file") + ": " + ServeChecks.message(e));
      }
    }
    List<X509Certificate> chain = null;
    PrivateKey key = null;
    try {
      String at = c.where("console.certificate-chain");
      if (ServeChecks.readable(c.consoleCertificateChain, at, errors)) {
        try {
          chain = Pem.readCertificates(c.consoleCertificateChain);
          if (chain.isEmpty()) {
            errors.add(at + ": " + c.consoleCertificateChain + ": no certificate in the file");
            chain = null;
          }
        } catch (KeyExchangeException e) {
          errors.add(at + ": " + c.consoleCertificateChain + ": " + ServeChecks.message(e));
        }
      }
      if (ServeChecks.readable(c.consoleKey, c.where("console.key"), errors)) {
        try {
          key = Pem.readPrivateKey(c.consoleKey, pass);
        } catch (KeyExchangeException e) {
          errors.add(c.where("console.key") + ": " + c.consoleKey + ": " + ServeChecks.message(e));
        }
      }
    } finally {
      Passphrases.wipe(pass);
    }
    if (chain != null) {
      try {
        chain.get(0).checkValidity();
      } catch (CertificateExpiredException | CertificateNotYetValidException e) {
        errors.add(
            c.where("console.certificate-chain")
                + ": "
                + c.consoleCertificateChain
                + ": the first certificate is not valid now (valid "
                + chain.get(0).getNotBefore().toInstant()
                + " to "
                + chain.get(0).getNotAfter().toInstant()
                + ")");
      }
      if (key != null && !ServeChecks.matches(chain.get(0), key)) {
        errors.add(
            c.where("console.key")
                + ": "
                + c.consoleKey
                + " is not the key of the first certificate in "
                + c.consoleCertificateChain);
      }
    }
    char[] token = null;
    String tokenAt = c.where("console.metrics-token-file");
    if (ServeChecks.readable(c.consoleMetricsTokenFile, tokenAt, errors)) {
      try {
        token = Passphrases.read(c.consoleMetricsTokenFile);
        if (token.length < 32) {
          errors.add(
              tokenAt
                  + ": the token (the first line of "
                  + c.consoleMetricsTokenFile
                  + ") must be at least 32 characters, got "
                  + token.length);
        }
      } catch (KeyExchangeException e) {
        errors.add(
            tokenAt
                + ": "
                + (e.reason() == KeyExchangeException.Reason.BAD_ARGUMENT
                    ? c.consoleMetricsTokenFile + " is empty (the token is its first line)"
                    : "cannot read " + c.consoleMetricsTokenFile));
      }
    }
    if (c.consoleListen != null
        && c.listen != null
        && c.consoleListen.getPort() != 0
        && c.consoleListen.equals(c.listen)) {
      errors.add(c.where("console.listen") + ": must differ from listen (" + c.listen + ")");
    }
    if (errors.size() > before) {
      Passphrases.wipe(token);
      return null;
    }
    ConsoleConfig config =
        new ConsoleConfig()
            .host(c.consoleListen.getAddress().getHostAddress())
            .port(c.consoleListen.getPort())
            .tls(Credential.of(chain.get(0), key), chain.subList(1, chain.size()))
            .sessionTimeout(c.consoleSessionTimeout)
            .sessionLifetime(c.consoleSessionLifetime)
            .loginLimit(c.consoleLoginAttempts, c.consoleLoginWindow)
            .requestReadTimeout(c.consoleRequestReadTimeout)
            .responseWriteTimeout(c.consoleResponseWriteTimeout)
            .exportMaxDuration(c.consoleExportMaxDuration)
            .metricsToken(token);
    Passphrases.wipe(token);
    try {
      return config.conclude();
    } catch (ConsoleException e) {
      errors.add(c.where("console") + ": " + e.getMessage());
      return null;
    }
  }
}
