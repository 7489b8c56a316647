package io.srdma.cli;

import io.srdma.keys.KeyExchangeException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;
import java.util.Arrays;
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

  /**
   * The first line of a passphrase file, or {@code null} if no file was given.
   *
   * @throws KeyExchangeException if it cannot be read or is empty
   */
  static char[] readPassphrase(Path file) {
    if (file == null) {
      return null;
    }
    byte[] raw;
    try {
      raw = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot read passphrase file " + file, e);
    }
    try {
      CharBuffer chars = StandardCharsets.UTF_8.decode(java.nio.ByteBuffer.wrap(raw));
      int end = 0;
      while (end < chars.limit() && chars.get(end) != '\n' && chars.get(end) != '\r') {
        end++;
      }
      if (end == 0) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_ARGUMENT, "passphrase file " + file + " is empty");
      }
      char[] pass = new char[end];
      chars.get(pass, 0, end);
      Arrays.fill(chars.array(), '\0');
      return pass;
    } finally {
      Arrays.fill(raw, (byte) 0);
    }
  }

  static void wipe(char[] pass) {
    if (pass != null) {
      Arrays.fill(pass, '\0');
    }
  }

  static byte[] sha256(X509Certificate cert) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(cert.getEncoded());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }
}
