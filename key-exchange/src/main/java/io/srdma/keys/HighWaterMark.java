package io.srdma.keys;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;

/**
 * The highest number (a CRL number, a policy serial) a host ever accepted, and the SHA-256 of what
 * carried it, kept in a small file so that it survives restarts: an older, still validly signed
 * object put back while the host was down is refused at the next start too ({@link
 * RevocationList#watching(Path, java.security.cert.X509Certificate, Path)}, the cluster's pushed
 * policy).
 *
 * <p>The file is one line {@code NUMBER SHA256HEX}, written atomically (temporary file renamed over
 * it) with POSIX permissions {@code 600}. Reading fails, rather than forgetting the mark, if the
 * file is malformed, unreadable, or writable by group or others (anyone who could lower it could
 * replay an old object). A missing file is no mark (a host's first start). Thread-safe.
 */
public final class HighWaterMark {
  /** Largest mark file read; a mark is one short line. */
  static final int MAX_BYTES = 64 << 10;

  private static final Set<PosixFilePermission> WRITABLE_BY_OTHERS =
      Set.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);

  private final Path file;
  private final String what;
  private BigInteger number;
  private byte[] digest;

  private HighWaterMark(Path file, String what) {
    this.file = file;
    this.what = what;
  }

  /**
   * Reads the mark kept in {@code file} (none if the file does not exist).
   *
   * @param what what the number counts, for messages ("CRL number", "policy serial")
   * @throws KeyExchangeException {@code IO_ERROR} if the file exists but is unreadable, malformed,
   *     or writable by group or others
   */
  public static HighWaterMark read(Path file, String what) {
    HighWaterMark m = new HighWaterMark(Objects.requireNonNull(file, "file"), what);
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return m;
    }
    PosixFileAttributes judged = null;
    if (SecureFiles.isPosix(file)) {
      try {
        judged = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (judged.permissions().stream().anyMatch(WRITABLE_BY_OTHERS::contains)) {
          throw m.refused("is writable by group or others (it must be 600)", null);
        }
      } catch (java.io.IOException e) {
        throw m.refused("cannot be read: " + e.getMessage(), e);
      }
    }
    // one line 'NUMBER SHA256HEX': anything near this size is not a mark. The file read is the one
    // judged above, never a link (it is only ever written by a rename), a FIFO or another file
    // swapped in since
    String text =
        new String(
                SecureFiles.read(file, MAX_BYTES, BoundedFileOpen.Links.REFUSE, judged),
                StandardCharsets.US_ASCII)
            .trim();
    String[] parts = text.split(" ");
    try {
      if (parts.length != 2 || parts[1].length() != 64) {
        throw new NumberFormatException("expected 'NUMBER SHA256HEX'");
      }
      BigInteger n = new BigInteger(parts[0]);
      byte[] d = HexFormat.of().parseHex(parts[1]);
      if (n.signum() < 0) {
        throw new NumberFormatException("negative");
      }
      m.number = n;
      m.digest = d;
    } catch (IllegalArgumentException e) {
      throw m.refused("is malformed (" + e.getMessage() + ")", e);
    }
    return m;
  }

  private KeyExchangeException refused(String why, Throwable cause) {
    return new KeyExchangeException(
        KeyExchangeException.Reason.IO_ERROR,
        what
            + " file "
            + file
            + " "
            + why
            + "; refusing to forget the highest "
            + what
            + " accepted",
        cause);
  }

  /** The file the mark is kept in. */
  public Path file() {
    return file;
  }

  /** The highest number accepted, or null if none ever was. */
  public synchronized BigInteger number() {
    return number;
  }

  /** The SHA-256 of what carried {@link #number()}, or null. */
  public synchronized byte[] digest() {
    return digest == null ? null : digest.clone();
  }

  /**
   * Whether {@code candidate} with content digest {@code sha256} goes backwards: below the mark, or
   * equal to it with another digest.
   */
  public synchronized boolean isRollback(BigInteger candidate, byte[] sha256) {
    if (number == null) {
      return false;
    }
    int order = candidate.compareTo(number);
    return order < 0 || (order == 0 && !MessageDigest.isEqual(sha256, digest));
  }

  /**
   * Raises the mark to {@code n} (content digest {@code sha256}) and writes the file; a number not
   * above the mark changes nothing.
   *
   * @throws KeyExchangeException {@code IO_ERROR} if the file cannot be written (the mark stays)
   */
  public synchronized void advance(BigInteger n, byte[] sha256) {
    if (number != null && n.compareTo(number) <= 0) {
      return;
    }
    SecureFiles.replaceOwnerOnly(
        file,
        (n + " " + HexFormat.of().formatHex(sha256) + "\n").getBytes(StandardCharsets.US_ASCII));
    number = n;
    digest = sha256.clone();
  }

  /** The SHA-256 of {@code content}. */
  public static byte[] sha256(byte[] content) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(content);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw Pem.internal("SHA-256 unavailable", e);
    }
  }

  @Override
  public String toString() {
    return "HighWaterMark[" + file + "]";
  }
}
