package io.srdma.keys;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Flushes a directory's entries to disk ({@code fsync} of the directory). Forcing a file ({@link
 * FileChannel#force}) makes its content durable, not its name: a file created, renamed or replaced
 * in a directory survives a crash or power loss only once the directory is flushed too. The
 * deployment CA's writes use it, and so does access-policy's audit log (its new files and the
 * renames of its rotation). Thread-safe; stateless.
 */
public final class DirectorySync {
  private DirectorySync() {}

  /**
   * Flushes {@code dir}'s entries to disk. Skipped where directories cannot be opened for it: a
   * file system without POSIX permissions (Windows), whose own semantics make a rename durable or
   * not.
   *
   * @param dir the directory (a link to one is followed)
   * @return whether it was flushed (false: skipped)
   * @throws IOException if it cannot be opened or flushed: what was created or renamed in it may
   *     not survive a crash
   */
  public static boolean sync(Path dir) throws IOException {
    if (!dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      return false;
    }
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
    return true;
  }
}
