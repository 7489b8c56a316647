package io.srdma.policy;

import io.srdma.keys.BoundedFileOpen;
import io.srdma.keys.DirectorySync;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Creates the audit files owner-only ({@code 600}) whatever the process umask: the permission is
 * given at creation (so the file is never more open than that, even for an instant) and set again
 * explicitly (the umask may have narrowed it; it never widens it). New files are created
 * exclusively ({@code O_EXCL}), so nothing that is already there is opened; existing ones are
 * opened by {@link AuditFileOpen}, which checks what it opened: a symbolic link, a FIFO, a device
 * or another file in place of a log or lock file, before its check or between check and open, is
 * refused with an {@link AuditFileRefusedException}.
 */
final class AuditFiles {
  static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

  private AuditFiles() {}

  /** For tests: told of each directory just flushed to disk. Null in production. */
  static volatile Consumer<Path> afterDirectorySync;

  /**
   * Creates {@code file} with {@code content}, flushed to disk, then its directory flushed: a crash
   * right after leaves the whole file under its name. Fails with FileAlreadyExistsException if it
   * exists.
   *
   * @throws IOException if it cannot be written, or its directory cannot be flushed (the file was
   *     written then, but may not survive a crash)
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
    syncDirectoryOf(file);
  }

  /**
   * Flushes the directory holding {@code file} to disk ({@link DirectorySync}), after {@code file}
   * was created or renamed there: forcing a file makes its content durable, not its name. Skipped
   * on a file system without POSIX permissions.
   *
   * @throws IOException if the directory cannot be opened or flushed
   */
  static void syncDirectoryOf(Path file) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    try {
      if (!DirectorySync.sync(dir)) {
        return;
      }
    } catch (IOException e) {
      throw new IOException(
          "cannot flush directory "
              + dir
              + " to disk after creating or renaming "
              + file.getFileName()
              + " ("
              + e.getMessage()
              + "): it may not survive a crash",
          e);
    }
    Consumer<Path> hook = afterDirectorySync;
    if (hook != null) {
      hook.accept(dir);
    }
  }

  /**
   * Creates {@code file} owner-only and opens it for appending; never opens one that exists, not
   * even an empty regular file: a log file is ours only if we created it. Whoever can write the log
   * directory could otherwise put a file of forged lines (or a link) where the next file goes, and
   * the chain would continue after their lines. Its directory is flushed to disk once it is
   * created, so that what is forced into it later is not lost with its name in a crash.
   *
   * @throws java.nio.file.FileAlreadyExistsException if anything, a link included, is there
   * @throws IOException if it cannot be created, or its directory cannot be flushed (then it is
   *     closed, and left there empty)
   */
  static FileChannel createAppend(Path file) throws IOException {
    FileChannel ch =
        FileChannel.open(
            file,
            Set.of(
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE,
                StandardOpenOption.APPEND,
                LinkOption.NOFOLLOW_LINKS),
            attributes(file));
    try {
      restrict(file);
      // the new name on disk before anything forced into the file counts as written
      syncDirectoryOf(file);
    } catch (IOException e) {
      ch.close();
      throw e;
    }
    return ch;
  }

  /**
   * Opens {@code file}, which must exist and be a regular file (a link is not followed), to append:
   * positioned at its end. It is opened read-write, not append-only, so that a FIFO swapped in
   * cannot block the open; one writer holds the log ({@link AuditWriterLock}), so nothing else
   * moves its end. What was opened is checked ({@link AuditFileOpen}).
   *
   * @param checked its attributes as the caller checked them, or null; the file opened must be the
   *     one they describe
   * @throws AuditFileRefusedException if it is not a regular file, or not the one checked
   * @throws java.nio.file.NoSuchFileException if it does not exist
   */
  static FileChannel openExistingAppend(Path file, BasicFileAttributes checked) throws IOException {
    FileChannel ch = AuditFileOpen.readWrite(file, checked);
    try {
      ch.position(ch.size());
    } catch (IOException e) {
      ch.close();
      throw e;
    }
    return ch;
  }

  /**
   * Opens the lock file {@code file} to read and write, creating it owner-only if it does not exist
   * (its content, a pid, is trusted by nobody). Read and write: opening a FIFO so does not block;
   * what was opened is checked ({@link AuditFileOpen}). It is refused if it is not a regular file
   * or has another name (a hard link): the writer truncates it, and a hard link could make that
   * another file of the same owner, the audit key or a rotated log.
   *
   * @throws AuditFileRefusedException if it is not a regular file, or was swapped meanwhile
   * @throws FileSystemException if it has more than one name
   */
  static FileChannel openLock(Path file) throws IOException {
    BoundedFileOpen.Created c = AuditFileOpen.createOrOpen(file, attributes(file));
    FileChannel ch = c.channel();
    try {
      if (c.created()) {
        restrict(file);
      }
      if (file.getFileSystem().supportedFileAttributeViews().contains("unix")
          && ((Number) Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS)).intValue()
              != 1) {
        throw new FileSystemException(
            file.toString(),
            null,
            "has other names (hard links): it may be another file, which locking truncates;"
                + " refused (remove it: a lock file holds nothing)");
      }
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
    return ch;
  }

  /**
   * The attributes of {@code file}, not followed if a link, if it is a regular file: opening a FIFO
   * blocks until someone opens its other end, and a device or a link need not end or be ours.
   * Whoever can write the log directory can put any of them in place of a file. A check only: what
   * is opened is checked again ({@link AuditFileOpen}).
   *
   * @param file the file
   * @param mayBeAbsent whether a file that does not exist passes (to be created)
   * @return its attributes, or null if it does not exist
   * @throws AuditFileRefusedException if it is not a regular file
   * @throws java.nio.file.NoSuchFileException if it does not exist and {@code mayBeAbsent} is false
   */
  static BasicFileAttributes requireRegular(Path file, boolean mayBeAbsent) throws IOException {
    return AuditFileOpen.regular(file, BoundedFileOpen.Links.REFUSE, mayBeAbsent);
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
