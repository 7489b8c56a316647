package io.srdma.keys;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * The one check that a secret file (a private key, the audit key) is for its owner only, before it
 * is read: POSIX permissions within {@code rw-------}. Files holding secrets are created that way
 * ({@link Pem#writePrivateKey}, the audit key); one that group or others may read, write or run was
 * opened up after it was written, or copied in carelessly, and is refused rather than used.
 *
 * <p>Symbolic links are followed: the target's permissions guard the bytes that are read (a link's
 * own mode is always {@code rwxrwxrwx} on Linux). On a file system without POSIX permissions
 * (Windows) nothing is checked, as there is no mode to judge. Thread-safe; stateless.
 */
public final class OwnerOnlyFiles {
  /** The most a secret file may allow: read and write by its owner. */
  public static final Set<PosixFilePermission> OWNER_READ_WRITE =
      EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

  private OwnerOnlyFiles() {}

  /**
   * The permissions of {@code file} when they allow more than {@link #OWNER_READ_WRITE}.
   *
   * @param file the secret file, or a link to it
   * @return its permissions as {@code ls -l} prints them (e.g. {@code rw-r-----}) if they are too
   *     open; empty if they are not, or if its file system has no POSIX permissions
   * @throws java.nio.file.NoSuchFileException if it does not exist
   * @throws IOException if its permissions cannot be read
   */
  public static Optional<String> looseMode(Path file) throws IOException {
    if (!file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      return Optional.empty();
    }
    Set<PosixFilePermission> p = Files.getPosixFilePermissions(file);
    return OWNER_READ_WRITE.containsAll(p)
        ? Optional.empty()
        : Optional.of(PosixFilePermissions.toString(p));
  }
}
