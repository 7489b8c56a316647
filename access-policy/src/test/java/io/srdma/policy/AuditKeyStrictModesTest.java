package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.keys.OwnerOnlyFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An audit key nobody else can replace, after ssh's StrictModes (as the private keys, {@code
 * KeyFileStrictModesTest}): whoever replaces the key can rebuild the log's chain. One owned by
 * another user, or in a directory group or others may write (or another user owns), is refused
 * unread, and none is created in such a directory.
 */
class AuditKeyStrictModesTest {
  /** A user id that is neither root nor, in any sane test run, the one running the tests. */
  private static final int NOBODY = 65534;

  @TempDir Path tmp;

  @BeforeEach
  void unixOnly() {
    assumeTrue(tmp.getFileSystem().supportedFileAttributeViews().contains("unix"));
  }

  private static void chmod(Path p, String mode) throws Exception {
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
  }

  private static int uid(Path p) throws Exception {
    return (Integer) Files.getAttribute(p, "unix:uid");
  }

  /** Whether this process may give files away (root, CAP_CHOWN). */
  private boolean canChown() throws Exception {
    Path probe = Files.createFile(tmp.resolve("probe"));
    try {
      Files.setAttribute(probe, "unix:uid", NOBODY);
      return uid(probe) == NOBODY;
    } catch (java.io.IOException e) {
      return false;
    } finally {
      Files.delete(probe);
    }
  }

  /** A log opened and closed once in a fresh {@code 700} directory: its key exists. */
  private Path logIn(String name) throws Exception {
    Path dir = Files.createDirectory(tmp.resolve(name));
    chmod(dir, "rwx------");
    Path log = dir.resolve("audit.log");
    AuditLog.open(log).close();
    return log;
  }

  private static AuditKeyExposedException refused(Path log) {
    AuditKeyExposedException e =
        assertThrows(AuditKeyExposedException.class, () -> AuditLog.open(log));
    Path key = AuditKey.defaultFile(log);
    assertEquals(key, e.keyFile());
    assertTrue(e.getMessage().contains("audit key " + key), e.getMessage());
    assertEquals(PolicyException.Category.AUDIT, e.category());
    return e;
  }

  @Test
  void shouldRefuseAKeyInADirectoryGroupOrOthersMayWrite() throws Exception {
    Path log = logIn("logs");
    Path dir = log.getParent();
    for (String mode : new String[] {"rwxrwx---", "rwx---rwx", "rwxrwxrwx", "rwx-w----"}) {
      chmod(dir, mode);
      AuditKeyExposedException e = refused(log);
      assertEquals(OwnerOnlyFiles.Problem.DIRECTORY, e.problem(), e.getMessage());
      assertEquals(dir, e.path());
      assertTrue(e.getMessage().contains("directory " + dir + " (" + mode), e.getMessage());
      Path key = AuditKey.defaultFile(log);
      assertThrows(AuditKeyExposedException.class, () -> AuditKey.load(key), "verify's read too");
    }
    chmod(dir, "rwxr-xr-x"); // others may list, not write: fine
    AuditLog.open(log).close();
  }

  @Test
  void shouldCreateNoKeyInADirectoryOthersMayWrite() throws Exception {
    Path dir = Files.createDirectory(tmp.resolve("open"));
    chmod(dir, "rwxrwxrwx");
    Path log = dir.resolve("audit.log");
    AuditKeyExposedException e = refused(log);
    assertEquals(OwnerOnlyFiles.Problem.DIRECTORY, e.problem(), e.getMessage());
    assertTrue(Files.notExists(AuditKey.defaultFile(log)), "no key left to be swapped");
    assertTrue(Files.notExists(log), "nothing logged under a key that is not kept");
  }

  @Test
  void shouldAcceptAnOwnKeyInAStickyWorldWritableDirectoryLikeTmp() throws Exception {
    Path dir = Files.createDirectory(tmp.resolve("shared"));
    Files.setAttribute(dir, "unix:mode", 01777);
    Path log = dir.resolve("audit.log");
    AuditLog.open(log).close(); // created there
    AuditLog.open(log).close(); // and read back: others cannot rename or delete it there
  }

  @Test
  void shouldRefuseALinkToTheKeyFromADirectoryOthersMayWrite() throws Exception {
    Path log = logIn("safe");
    Path open = Files.createDirectory(tmp.resolve("open"));
    Path link = Files.createSymbolicLink(open.resolve("audit.key"), AuditKey.defaultFile(log));
    chmod(open, "rwxrwxrwx");
    AuditLogOptions o = new AuditLogOptions(log).keyFile(link);
    AuditKeyExposedException e =
        assertThrows(AuditKeyExposedException.class, () -> AuditLog.open(o));
    assertEquals(OwnerOnlyFiles.Problem.DIRECTORY, e.problem(), e.getMessage());
    assertTrue(e.getMessage().contains("directory " + open), e.getMessage());
    chmod(open, "rwx------");
    AuditLog.open(new AuditLogOptions(log).keyFile(link)).close();
  }

  @Test
  void shouldRefuseAKeyOwnedByAnotherUser() throws Exception {
    assumeTrue(canChown(), "needs root (or CAP_CHOWN) to give a file to another user");
    Path log = logIn("logs");
    Path key = AuditKey.defaultFile(log);
    int mine = uid(key);
    Files.setAttribute(key, "unix:uid", NOBODY);
    AuditKeyExposedException e = refused(log);
    assertEquals(OwnerOnlyFiles.Problem.OWNER, e.problem(), e.getMessage());
    assertTrue(e.getMessage().contains("uid " + NOBODY), e.getMessage());
    Files.setAttribute(key, "unix:uid", mine);
    AuditLog.open(log).close();
  }

  @Test
  void shouldRefuseAKeyInADirectoryAnotherUserOwns() throws Exception {
    assumeTrue(canChown(), "needs root (or CAP_CHOWN) to give a directory to another user");
    Path log = logIn("theirs");
    Files.setAttribute(log.getParent(), "unix:uid", NOBODY);
    AuditKeyExposedException e = refused(log);
    assertEquals(OwnerOnlyFiles.Problem.DIRECTORY, e.problem(), e.getMessage());
    assertTrue(e.getMessage().contains("owned by uid " + NOBODY), e.getMessage());
  }

  @Test
  void shouldStillNameALooseModeWithItsType() throws Exception {
    Path log = logIn("logs");
    chmod(AuditKey.defaultFile(log), "rw-r-----");
    AuditKeyExposedException e = refused(log);
    assertEquals(OwnerOnlyFiles.Problem.MODE, e.problem(), e.getMessage());
    assertTrue(e.getMessage().contains("(rw-r-----); chmod 600 it"), e.getMessage());
  }
}
