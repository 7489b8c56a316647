package io.srdma.policy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Creates the audit files owner-only ({@code 600}) whatever the process umask: the permission is
 * given at creation (so the file is never more open than that, even for an instant) and set again
 * explicitly (the umask may have narrowed it; it never widens it). A symbolic link in place of a
 * log or key file is refused rather than followed.
 */
final class AuditFiles {
  static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

  private AuditFiles() {}

  /**
   * Creates {@code file} with {@code content}; fails with FileAlreadyExistsException if it exists.
   */
  static void writeNew(Path file, byte[] content) throws IOException {
    try (FileChannel ch =
        FileChannel.open(
            file,
            Set.of(
                StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
            attributes(file))) {
      restrict(file);
      ByteBuffer buf = ByteBuffer.wrap(content);
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
  }

  /** Opens {@code file} for appending, creating it owner-only if it does not exist. */
  static FileChannel openAppend(Path file) throws IOException {
    boolean existed = Files.exists(file);
    FileChannel ch =
        FileChannel.open(
            file,
            Set.of(
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE,
                StandardOpenOption.APPEND,
                LinkOption.NOFOLLOW_LINKS),
            attributes(file));
    if (!existed) {
      try {
        restrict(file);
      } catch (IOException e) {
        ch.close();
        throw e;
      }
    }
    return ch;
  }

  private static FileAttribute<?>[] attributes(Path file) {
    return isPosix(file)
        ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
        : new FileAttribute<?>[0];
  }

  private static void restrict(Path file) throws IOException {
    if (isPosix(file)) {
      Files.setPosixFilePermissions(file, OWNER_ONLY);
    }
  }

  /** Whether the file's store has POSIX permissions. */
  static boolean isPosix(Path file) {
    return file.getFileSystem().supportedFileAttributeViews().contains("posix");
  }
}
