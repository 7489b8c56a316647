package io.srdma.policy;

import io.srdma.keys.OwnerOnlyFiles;
import java.nio.file.Path;

/**
 * The audit key file is refused, unread (or not created), because someone other than this process's
 * user and root could read or replace it ({@link OwnerOnlyFiles#strictModes}): whoever can replace
 * the key can rebuild the log's chain under a key of their own. {@link #problem()} says what is
 * wrong: the key's mode, its owner, or the directory holding it (or a link to it).
 */
public final class AuditKeyExposedException extends AuditException {
  private static final long serialVersionUID = 1L;

  private final String keyFile;
  private final OwnerOnlyFiles.Problem problem;
  private final String path;

  AuditKeyExposedException(Path keyFile, OwnerOnlyFiles.Finding finding) {
    super(message(keyFile, finding), null);
    this.keyFile = keyFile.toString();
    this.problem = finding.problem();
    this.path = finding.path().toString();
  }

  private static String message(Path keyFile, OwnerOnlyFiles.Finding f) {
    return switch (f.problem()) {
      case MODE ->
          "audit key " + keyFile + " is open to group or others (" + f.detail() + "); chmod 600 it";
      case OWNER ->
          "audit key "
              + keyFile
              + " is owned by "
              + f.detail()
              + ", neither this process's user nor root, who could replace it and rebuild the"
              + " log's chain; chown it to the user that runs srdma";
      case DIRECTORY ->
          "audit key "
              + keyFile
              + " is in directory "
              + f.path()
              + " ("
              + f.detail()
              + "), where users other than this process's user and root can replace it and"
              + " rebuild the log's chain; chmod go-w it and chown it to the user that runs srdma,"
              + " or move the key";
    };
  }

  /** The audit key file refused. */
  public Path keyFile() {
    return Path.of(keyFile);
  }

  /** What is wrong with it. */
  public OwnerOnlyFiles.Problem problem() {
    return problem;
  }

  /** The file or directory that is wrong: the key itself, or the directory holding it. */
  public Path path() {
    return Path.of(path);
  }
}
