package io.srdma.keys;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The one check that a secret file (a private key, the audit key) is for its owner only, before it
 * is read: POSIX permissions within {@code rw-------} ({@link #looseMode}), and, for private keys
 * and the audit key, that nobody but this process's user (or root) can replace it ({@link
 * #strictModes}, after ssh's {@code StrictModes}): the file is owned by this user or root, and the
 * directory holding it neither is owned by another user nor may be written by group or others
 * (unless it is sticky, as {@code /tmp} is, and the entry in it is this user's or root's); {@link
 * #exposedDirectory} judges a directory before a secret file is created in it. Files holding
 * secrets are created that way ({@link Pem#writePrivateKey}, the audit key); one that group or
 * others may read, write or run was opened up after it was written, or copied in carelessly, and is
 * refused rather than used.
 *
 * <p>Symbolic links are followed: the target's permissions guard the bytes that are read (a link's
 * own mode is always {@code rwxrwxrwx} on Linux); the directories of both the link and its target
 * are judged, since whoever can write either can point the key elsewhere. On a file system without
 * POSIX permissions (Windows) nothing is checked, as there is no mode to judge; without the {@code
 * unix} attribute view (owner ids) only the modes are. Thread-safe; stateless.
 */
public final class OwnerOnlyFiles {
  /** The most a secret file may allow: read and write by its owner. */
  public static final Set<PosixFilePermission> OWNER_READ_WRITE =
      EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

  private static final int GROUP_OR_OTHERS_WRITE = 0022;
  private static final int STICKY = 01000;

  private OwnerOnlyFiles() {}

  /** What is wrong with a secret file's place, as {@link #strictModes(Path)} finds it. */
  public enum Problem {
    /** The file's own mode allows group or others access ({@link #looseMode}). */
    MODE,
    /** The file is owned by a user other than this process's user and root. */
    OWNER,
    /**
     * A directory holding the file (or the link to it) may be written by group or others, or is
     * owned by another user: they can replace the file.
     */
    DIRECTORY
  }

  /**
   * A finding of {@link #strictModes(Path)}.
   *
   * @param problem what is wrong
   * @param path the file or directory it is wrong with
   * @param detail the mode ({@code ls -l} form) or owner found, for the message
   */
  public record Finding(Problem problem, Path path, String detail) {
    /** Checks the parts are present. */
    public Finding {
      Objects.requireNonNull(problem, "problem");
      Objects.requireNonNull(path, "path");
      Objects.requireNonNull(detail, "detail");
    }
  }

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

  /**
   * The first reason someone other than this process's user (or root) could read or replace {@code
   * file}: its mode ({@link #looseMode}), its owner, then the directory of the path as given and
   * the directory of the file it resolves to (group- or world-writable and not sticky, or owned by
   * another user). Empty if there is none, or on a file system without POSIX permissions.
   *
   * @param file the secret file, or a link to it
   * @throws java.nio.file.NoSuchFileException if it does not exist
   * @throws IOException if an attribute cannot be read
   */
  public static Optional<Finding> strictModes(Path file) throws IOException {
    Optional<String> loose = looseMode(file);
    if (loose.isPresent()) {
      return Optional.of(new Finding(Problem.MODE, file, loose.get()));
    }
    if (!file.getFileSystem().supportedFileAttributeViews().contains("unix")) {
      return Optional.empty();
    }
    OptionalInt me = processUid();
    if (me.isEmpty()) {
      return Optional.empty();
    }
    Path real = file.toRealPath();
    int owner = uid(real, true);
    if (!trusted(owner, me.getAsInt())) {
      return Optional.of(new Finding(Problem.OWNER, file, "uid " + owner));
    }
    Path given = file.toAbsolutePath();
    for (Path entry : given.equals(real) ? new Path[] {real} : new Path[] {given, real}) {
      Path dir = entry.getParent();
      if (dir == null) {
        continue;
      }
      Optional<Finding> f =
          directory(dir, me.getAsInt(), trusted(uid(entry, false), me.getAsInt()));
      if (f.isPresent()) {
        return f;
      }
    }
    return Optional.empty();
  }

  /**
   * Why someone other than this process's user (or root) could replace a secret file that this
   * process is about to create in {@code dir}, judged as {@link #strictModes} judges the directory
   * of an existing one: {@code dir} is owned by another user, or group or others may write it and
   * it is not sticky (in a sticky directory the entry this process creates is its own). Check it
   * before creating the file, so that nothing is written where it could be swapped. Empty if there
   * is no reason, or on a file system without POSIX permissions or owner ids.
   *
   * @param dir the directory (a link to one is followed)
   * @throws java.nio.file.NoSuchFileException if it does not exist
   * @throws IOException if an attribute cannot be read
   */
  public static Optional<Finding> exposedDirectory(Path dir) throws IOException {
    if (!dir.getFileSystem().supportedFileAttributeViews().contains("unix")) {
      return Optional.empty();
    }
    OptionalInt me = processUid();
    return me.isEmpty() ? Optional.empty() : directory(dir, me.getAsInt(), true);
  }

  private static Optional<Finding> directory(Path dir, int me, boolean entryTrusted)
      throws IOException {
    int dirOwner = uid(dir, true);
    if (!trusted(dirOwner, me)) {
      return Optional.of(new Finding(Problem.DIRECTORY, dir, "owned by uid " + dirOwner));
    }
    int mode = (Integer) Files.getAttribute(dir, "unix:mode");
    if ((mode & GROUP_OR_OTHERS_WRITE) != 0 && ((mode & STICKY) == 0 || !entryTrusted)) {
      return Optional.of(
          new Finding(
              Problem.DIRECTORY,
              dir,
              PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))
                  + ((mode & STICKY) == 0 ? "" : " sticky")));
    }
    return Optional.empty();
  }

  private static boolean trusted(int owner, int me) {
    return owner == me || owner == 0;
  }

  private static int uid(Path p, boolean follow) throws IOException {
    return (Integer)
        (follow
            ? Files.getAttribute(p, "unix:uid")
            : Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS));
  }

  /** This process's user id, where the JDK can tell it. */
  private static OptionalInt processUid() {
    try {
      return OptionalInt.of((int) new com.sun.security.auth.module.UnixSystem().getUid());
    } catch (LinkageError | RuntimeException e) {
      return OptionalInt.empty();
    }
  }
}
