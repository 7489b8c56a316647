package io.srdma.keys;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * File writes that never overwrite silently and give every file explicit POSIX permissions,
 * whatever the process umask: {@code 600} for private keys (and the CA's lock file), {@code 644}
 * for public files (certificates, CRLs, {@code issued.txt}). The permission is given at creation,
 * so a file is never more open than that even for an instant (the umask can only narrow it), and
 * then set again explicitly (so that a strict umask does not make a public file unreadable).
 *
 * <p>Durable: a file written here is flushed to disk ({@link FileChannel#force}) before it is
 * closed or renamed into place, and its directory is flushed after the file was created or renamed
 * in it, so a crash or power loss right after leaves the old file or the whole new one, never an
 * empty or partial one (a rename alone orders nothing: the file system may write the new name
 * before the new content). Where directories cannot be opened (not POSIX) the directory flush is
 * skipped.
 */
final class SecureFiles {
  private static final Logger LOG = LoggerFactory.getLogger(SecureFiles.class);
  static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
  static final Set<PosixFilePermission> PUBLIC = PosixFilePermissions.fromString("rw-r--r--");

  /** Told of each file or directory just flushed to disk (tests watch the order). */
  static volatile Consumer<Path> afterForce = p -> {};

  private SecureFiles() {}

  /**
   * Creates {@code file} with {@code content}; fails if it exists.
   *
   * @param ownerOnly create with POSIX permissions 600 (private keys), else 644
   */
  static void writeNew(Path file, byte[] content, boolean ownerOnly) {
    Set<PosixFilePermission> perms = ownerOnly ? OWNER_ONLY : PUBLIC;
    boolean posix = isPosix(file);
    if (ownerOnly && !posix) {
      LOG.warn("file system of {} has no POSIX permissions; restrict access to it yourself", file);
    }
    try {
      try (FileChannel ch =
          FileChannel.open(
              file,
              Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
              attributes(posix, perms))) {
        if (posix) {
          Files.setPosixFilePermissions(file, perms);
        }
        writeAll(ch, content);
        force(ch, file);
      }
      syncAfter(file);
    } catch (FileAlreadyExistsException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.FILE_EXISTS, file + " already exists; not overwriting it");
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Replaces a public file ({@code 644}) atomically and durably: write a temporary file (created
   * {@code 600}), set its permissions, flush it to disk, rename it over the old one, then flush the
   * directory.
   */
  static void replace(Path file, byte[] content) {
    replace(file, content, PUBLIC);
  }

  /** Replaces a private file ({@code 600}) atomically, as {@link #replace(Path, byte[])}. */
  static void replaceOwnerOnly(Path file, byte[] content) {
    replace(file, content, OWNER_ONLY);
  }

  private static void replace(Path file, byte[] content, Set<PosixFilePermission> perms) {
    Path dir = file.toAbsolutePath().getParent();
    boolean posix = isPosix(file);
    try {
      Path tmp =
          Files.createTempFile(
              dir, "." + file.getFileName(), ".tmp", attributes(posix, OWNER_ONLY));
      try {
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
          writeAll(ch, content);
          if (posix) {
            Files.setPosixFilePermissions(tmp, perms);
          }
          force(ch, tmp); // content and permissions on disk before the name points at them
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot write " + file + ": " + e.getMessage(), e);
    }
    syncAfter(file); // the rename itself
  }

  /** Flushes the directory of {@code file}, just created or renamed there. */
  private static void syncAfter(Path file) {
    Path dir = file.toAbsolutePath().getParent();
    try {
      syncDirectory(dir);
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR,
          file
              + " was written, but its directory could not be flushed to disk ("
              + e.getMessage()
              + "): it may not survive a crash",
          e);
    }
  }

  /**
   * Appends {@code content} to the existing regular file {@code file} (a link is not followed) and
   * flushes it to disk. It is opened read-write and positioned at its end, not opened append-only:
   * a FIFO swapped in cannot block the open; the caller holds the CA's lock, so nothing else moves
   * the end. What was opened is checked ({@link CheckedOpen}).
   *
   * @throws KeyExchangeException {@code IO_ERROR} if it is not a regular file, {@code
   *     FILE_REPLACED} if it was swapped between its check and its open
   * @throws IOException if it cannot be written
   */
  static void appendDurably(Path file, byte[] content) throws IOException {
    try (FileChannel ch = CheckedOpen.readWrite(file)) {
      ch.position(ch.size());
      writeAll(ch, content);
      force(ch, file);
    }
  }

  private static void writeAll(FileChannel ch, byte[] content) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(content);
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
  }

  private static void force(FileChannel ch, Path path) throws IOException {
    ch.force(true);
    afterForce.accept(path);
  }

  /**
   * Flushes {@code dir}'s entries to disk: a file created, renamed or replaced in it survives a
   * crash only then. Skipped where directories cannot be opened for it (not POSIX, e.g. Windows).
   */
  static void syncDirectory(Path dir) throws IOException {
    if (DirectorySync.sync(dir)) {
      afterForce.accept(dir);
    }
  }

  /**
   * Opens a lock file to read and write (a lock needs a writable channel), creating it {@code 600}
   * if missing: created exclusively, else opened and checked ({@link CheckedOpen}); a link is not
   * followed (it could create or lock a file elsewhere), a FIFO cannot block the open.
   *
   * @throws KeyExchangeException {@code IO_ERROR} if it is not a regular file, {@code
   *     FILE_REPLACED} if it was swapped between its check and its open
   */
  static FileChannel openLock(Path file) throws IOException {
    boolean posix = isPosix(file);
    BoundedFileOpen.Created c = CheckedOpen.createOrOpen(file, attributes(posix, OWNER_ONLY));
    FileChannel ch = c.channel();
    if (posix && c.created()) {
      try {
        Files.setPosixFilePermissions(file, OWNER_ONLY);
      } catch (IOException e) {
        ch.close();
        throw e;
      }
    }
    return ch;
  }

  private static FileAttribute<?>[] attributes(boolean posix, Set<PosixFilePermission> perms) {
    return posix
        ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(perms)}
        : new FileAttribute<?>[0];
  }

  /**
   * Reads a whole regular file of at most {@code maxBytes} (a link to one is followed): a device, a
   * pipe or a file too large for one array is refused with a typed error, never an endless read or
   * an {@link OutOfMemoryError}.
   */
  static byte[] read(Path file, int maxBytes) {
    return read(file, maxBytes, BoundedFileOpen.Links.FOLLOW, null);
  }

  /**
   * Reads a whole regular file of at most {@code maxBytes}, opened first and checked after ({@link
   * CheckedOpen}): a FIFO, a link (where refused) or another file swapped in after the check is
   * refused, never read nor waited on without end.
   *
   * @param checked its attributes as the caller checked them (and judged on), or null to read them
   *     here; the file read must be the one they describe
   * @throws KeyExchangeException {@code IO_ERROR} if it does not exist, is not a regular file, is
   *     too large or cannot be read; {@code FILE_REPLACED} if it was swapped between its check and
   *     its open
   */
  static byte[] read(
      Path file, int maxBytes, BoundedFileOpen.Links links, BasicFileAttributes checked) {
    try (FileChannel ch = CheckedOpen.read(file, links, checked);
        InputStream in = Channels.newInputStream(ch)) {
      byte[] bytes = in.readNBytes(maxBytes);
      if (in.read() >= 0) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.IO_ERROR,
            file + " is larger than the limit of " + maxBytes + " bytes");
      }
      return bytes;
    } catch (NoSuchFileException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, file + " does not exist", e);
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  /** Whether the file's store supports POSIX permissions. */
  static boolean isPosix(Path file) {
    Path dir = file.toAbsolutePath().getParent();
    return dir != null
        && Files.exists(dir)
        && dir.getFileSystem().supportedFileAttributeViews().contains("posix");
  }
}
