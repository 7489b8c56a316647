package io.srdma.policy;

import io.srdma.keys.BoundedFileOpen;
import io.srdma.keys.OwnerOnlyFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret key of an audit chain: 32 random bytes that key the HMAC-SHA256 of every line. It is
 * kept in its own file, created {@code 600}, never in the log: whoever can write the log but not
 * read this file cannot forge, edit or rebuild a line without {@code srdma audit verify --key}
 * seeing it.
 *
 * <p>File format: one line {@code srdma-audit-key-v1:<64 hex>}. A key file that group or others may
 * read or write, that another user than this process's and root owns, that lies in a directory
 * another user could replace it in ({@link OwnerOnlyFiles#strictModes}), or that is not a regular
 * file, is refused; no more than a key line is read. {@link #close()} wipes the key bytes held here
 * (the JDK's {@link Mac} keeps its own copy of the key pads, which cannot be wiped). Thread-safe:
 * {@link #newMac()} gives each caller its own instance.
 */
public final class AuditKey implements AutoCloseable {
  /** Key length in bytes. */
  public static final int LENGTH = 32;

  private static final String PREFIX = "srdma-audit-key-v1:";
  private static final String HMAC = "HmacSHA256";

  private final byte[] key;
  private final String id;
  private volatile boolean closed;

  private AuditKey(byte[] key) {
    if (key.length != LENGTH) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT, "an audit key is " + LENGTH + " bytes");
    }
    this.key = key.clone();
    Mac mac = newMac();
    byte[] tag = mac.doFinal("srdma audit key id".getBytes(StandardCharsets.US_ASCII));
    this.id = HexFormat.of().formatHex(tag, 0, 8);
  }

  /**
   * A key from raw bytes (tests, or a key kept elsewhere); the array is copied.
   *
   * @param key 32 bytes
   * @return the key
   */
  public static AuditKey of(byte[] key) {
    return new AuditKey(Objects.requireNonNull(key, "key"));
  }

  /** A fresh random key, not stored anywhere (tests). */
  public static AuditKey random() {
    byte[] k = new byte[LENGTH];
    new SecureRandom().nextBytes(k);
    try {
      return new AuditKey(k);
    } finally {
      Arrays.fill(k, (byte) 0);
    }
  }

  /**
   * The default key file of a log: {@code <log name without its extension>.key} beside it, e.g.
   * {@code audit.key} for {@code audit.log}, so that a shell glob {@code audit.log*} does not pick
   * it up.
   *
   * @param log the active log file
   * @return the key file
   */
  public static Path defaultFile(Path log) {
    String name = log.getFileName().toString();
    int dot = name.lastIndexOf('.');
    String stem = dot > 0 ? name.substring(0, dot) : name;
    return log.toAbsolutePath().resolveSibling(stem + ".key");
  }

  /**
   * Reads the key file, or creates it with a new random key (POSIX {@code 600}, whatever the umask)
   * if it does not exist.
   *
   * @param file the key file
   * @return the key
   * @throws AuditKeyExposedException if another user could read or replace it ({@link #load}), or
   *     could replace it in the directory where it would be created; nothing is created then
   * @throws AuditException if it cannot be read or created, or is malformed
   */
  public static AuditKey loadOrCreate(Path file) {
    if (!Files.exists(file)) {
      requireSafeDirectory(file);
      byte[] k = new byte[LENGTH];
      new SecureRandom().nextBytes(k);
      byte[] text = encode(k);
      try {
        AuditFiles.writeNew(file, text);
        return new AuditKey(k);
      } catch (FileAlreadyExistsException e) {
        // created by someone else in between: read theirs
      } catch (IOException e) {
        throw new AuditException("cannot create audit key " + file + ": " + e, e);
      } finally {
        Arrays.fill(k, (byte) 0);
        Arrays.fill(text, (byte) 0);
      }
    }
    return load(file);
  }

  /**
   * Refuses, before anything is written, to create a key where another user could replace it:
   * whoever swaps in a key of their own after the first open can rebuild the chain from then on.
   */
  private static void requireSafeDirectory(Path file) {
    Path dir = file.toAbsolutePath().getParent();
    Optional<OwnerOnlyFiles.Finding> exposed;
    try {
      exposed = dir == null ? Optional.empty() : OwnerOnlyFiles.exposedDirectory(dir);
    } catch (IOException e) {
      throw new AuditException("cannot create audit key " + file + ": " + e, e);
    }
    if (exposed.isPresent()) {
      throw new AuditKeyExposedException(file, exposed.get());
    }
  }

  /**
   * Reads a key file.
   *
   * @param file the key file
   * @return the key
   * @throws AuditKeyExposedException if group or others may access it, another user (not root) owns
   *     it, or it is in a directory (or reached by a link in one) that group or others may write
   *     and that is not sticky, or that another user owns ({@link OwnerOnlyFiles#strictModes});
   *     nothing is read then
   * @throws AuditException if it cannot be read, is malformed, or is not a regular file
   */
  public static AuditKey load(Path file) {
    byte[] text;
    try {
      // a FIFO or a device is refused before anything else; the file judged is the one read
      BasicFileAttributes seen = AuditFileOpen.regular(file, BoundedFileOpen.Links.FOLLOW, false);
      Optional<OwnerOnlyFiles.Finding> exposed = OwnerOnlyFiles.strictModes(file);
      if (exposed.isPresent()) {
        throw new AuditKeyExposedException(file, exposed.get());
      }
      text = readBounded(file, seen);
    } catch (NoSuchFileException e) {
      throw new AuditException("audit key " + file + " does not exist", e);
    } catch (IOException e) {
      throw new AuditException("cannot read audit key " + file + ": " + e, e);
    }
    byte[] k = new byte[LENGTH];
    try {
      int n = text.length;
      if (n > 0 && text[n - 1] == '\n') {
        n--;
      }
      byte[] prefix = PREFIX.getBytes(StandardCharsets.US_ASCII);
      if (n != prefix.length + 2 * LENGTH
          || !Arrays.equals(text, 0, prefix.length, prefix, 0, prefix.length)) {
        throw new AuditException(
            "audit key " + file + " is not one line '" + PREFIX + "<64 hex digits>'", null);
      }
      for (int i = 0; i < LENGTH; i++) {
        int hi = Character.digit(text[prefix.length + 2 * i], 16);
        int lo = Character.digit(text[prefix.length + 2 * i + 1], 16);
        if (hi < 0 || lo < 0) {
          throw new AuditException("audit key " + file + " has a character that is not hex", null);
        }
        k[i] = (byte) (hi << 4 | lo);
      }
      return new AuditKey(k);
    } finally {
      Arrays.fill(text, (byte) 0);
      Arrays.fill(k, (byte) 0);
    }
  }

  /**
   * The file's first bytes, one more than a key line with its newline has, so a longer file is seen
   * to be one; only from the regular file {@code seen} describes (a link to one is followed),
   * opened first and checked after ({@link AuditFileOpen}): a FIFO swapped in would block the open
   * or the read, a device or a huge file would fill the heap.
   */
  private static byte[] readBounded(Path file, BasicFileAttributes seen) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(PREFIX.length() + 2 * LENGTH + 2);
    try (FileChannel c = AuditFileOpen.read(file, BoundedFileOpen.Links.FOLLOW, seen)) {
      while (buf.hasRemaining() && c.read(buf) >= 0) {
        // until the buffer is full or the file ends
      }
    }
    byte[] text = Arrays.copyOf(buf.array(), buf.position());
    Arrays.fill(buf.array(), (byte) 0);
    return text;
  }

  private static byte[] encode(byte[] k) {
    byte[] prefix = PREFIX.getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[prefix.length + 2 * LENGTH + 1];
    System.arraycopy(prefix, 0, out, 0, prefix.length);
    byte[] hex = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i < LENGTH; i++) {
      out[prefix.length + 2 * i] = hex[(k[i] >> 4) & 0xf];
      out[prefix.length + 2 * i + 1] = hex[k[i] & 0xf];
    }
    out[out.length - 1] = '\n';
    return out;
  }

  /**
   * A short public name of this key (the first 8 bytes of an HMAC of a fixed text), written in each
   * genesis line so that verify can tell "another key" from "edited". It reveals nothing of the
   * key.
   */
  public String id() {
    return id;
  }

  /** A new HMAC-SHA256 instance keyed with this key; not thread-safe itself. */
  Mac newMac() {
    if (closed) {
      throw new PolicyException(PolicyException.Category.CLOSED, "audit key closed");
    }
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(new SecretKeySpec(key, HMAC));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required of every JVM", e);
    }
  }

  /** Wipes the key bytes held here. Idempotent. */
  @Override
  public void close() {
    closed = true;
    Arrays.fill(key, (byte) 0);
  }

  @Override
  public String toString() {
    return "AuditKey[id=" + id + "]";
  }
}
