package io.srdma.keys;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** File writes that never overwrite silently and keep private keys owner-only. */
final class SecureFiles {
  private static final Logger LOG = LoggerFactory.getLogger(SecureFiles.class);
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");

  private SecureFiles() {}

  /**
   * Creates {@code file} with {@code content}; fails if it exists.
   *
   * @param ownerOnly create with POSIX permissions 600 (private keys)
   */
  static void writeNew(Path file, byte[] content, boolean ownerOnly) {
    boolean posix = isPosix(file);
    FileAttribute<?>[] attrs =
        ownerOnly && posix
            ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
            : new FileAttribute<?>[0];
    if (ownerOnly && !posix) {
      LOG.warn("file system of {} has no POSIX permissions; restrict access to it yourself", file);
    }
    try (SeekableByteChannel ch =
        Files.newByteChannel(
            file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), attrs)) {
      if (ownerOnly && posix) {
        // the attribute is subject to the umask; set it again explicitly
        Files.setPosixFilePermissions(file, OWNER_ONLY);
      }
      ByteBuffer buf = ByteBuffer.wrap(content);
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
    } catch (FileAlreadyExistsException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.FILE_EXISTS, file + " already exists; not overwriting it");
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /** Replaces {@code file} atomically (write a temporary file, then rename over it). */
  static void replace(Path file, byte[] content) {
    Path dir = file.toAbsolutePath().getParent();
    try {
      Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
      try {
        Files.write(tmp, content);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /** Reads a whole file. */
  static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
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
