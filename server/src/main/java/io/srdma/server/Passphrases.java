package io.srdma.server;

import io.srdma.keys.KeyExchangeException;
import java.io.IOException;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Passphrase and token files: the first line, read into a {@code char[]} the caller wipes.
 *
 * <p>Thread safety: stateless; any thread.
 */
public final class Passphrases {
  /** Most bytes read from a passphrase or token file. */
  static final int MAX_BYTES = 64 << 10;

  private Passphrases() {}

  /**
   * The first line of a passphrase file, or {@code null} if no file was given.
   *
   * @throws KeyExchangeException if it cannot be read or is empty
   */
  public static char[] read(Path file) {
    if (file == null) {
      return null;
    }
    byte[] raw;
    try (java.io.InputStream in = Files.newInputStream(file)) {
      // bounded: a device or pipe without end (/dev/zero) must be a refused file, not an
      // OutOfMemoryError that takes the command down
      raw = in.readNBytes(MAX_BYTES + 1);
      if (raw.length > MAX_BYTES) {
        Arrays.fill(raw, (byte) 0);
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_ARGUMENT,
            "passphrase file "
                + file
                + " is larger than "
                + MAX_BYTES
                + " bytes; it should hold one line");
      }
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

  /** Overwrites a passphrase; null is ignored. */
  public static void wipe(char[] pass) {
    if (pass != null) {
      Arrays.fill(pass, '\0');
    }
  }
}
