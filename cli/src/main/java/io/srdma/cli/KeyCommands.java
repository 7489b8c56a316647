package io.srdma.cli;

import io.srdma.keys.KeyExchangeException;
import io.srdma.server.Addresses;
import io.srdma.server.Passphrases;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;
import java.util.concurrent.Callable;
import picocli.CommandLine;

/** What {@code srdma ca} and {@code srdma cert} share: error reporting and passphrase files. */
final class KeyCommands {
  /** Exit status for a failure that is not the caller's input. */
  static final int EXIT_FAILED = 1;

  /** Exit status for bad input (names, serials, arguments), like picocli's usage errors. */
  static final int EXIT_USAGE = 2;

  private KeyCommands() {}

  /** Runs a command body, turning a typed key-exchange error into one line on stderr. */
  static int run(CommandLine.Model.CommandSpec spec, Callable<Integer> body) {
    try {
      return body.call();
    } catch (KeyExchangeException e) {
      PrintWriter err = spec.commandLine().getErr();
      err.println(
          "srdma " + spec.qualifiedName(" ").replaceFirst("^srdma ", "") + ": " + message(e));
      err.flush();
      return e.category() == KeyExchangeException.Category.INPUT ? EXIT_USAGE : EXIT_FAILED;
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The message without the reason prefix, which is for logs. */
  private static String message(KeyExchangeException e) {
    // without the reason prefix and Java class names, with the cause in plain words
    return Addresses.explain(e);
  }

  /** The first line of a passphrase file, or null (see {@link Passphrases#read}). */
  static char[] readPassphrase(Path file) {
    return Passphrases.read(file);
  }

  static void wipe(char[] pass) {
    Passphrases.wipe(pass);
  }

  static byte[] sha256(X509Certificate cert) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(cert.getEncoded());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }
}
