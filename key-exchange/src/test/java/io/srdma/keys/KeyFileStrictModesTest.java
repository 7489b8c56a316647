package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A private key nobody else can replace, after ssh's StrictModes: one owned by another user, or in
 * a directory group or others may write (or another user owns), is refused unread, naming the file
 * or directory and what is wrong with it. The mode of the key file itself is {@link
 * PrivateKeyFilePermissionsTest}'s.
 */
class KeyFileStrictModesTest {
  /** A user id that is neither root nor, in any sane test run, the one running the tests. */
  private static final int NOBODY = 65534;

  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void posixOnly() {
    assumeTrue(tmp.getFileSystem().supportedFileAttributeViews().contains("unix"));
    pki = TestPki.create(tmp.resolve("ca"));
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

  private Path[] credential(Path dir) throws Exception {
    Files.createDirectories(dir);
    chmod(dir, "rwx------");
    Path crt = dir.resolve("p.crt");
    Path key = dir.resolve("p.key");
    pki.peer("acme", "p").writeTo(crt, key, null);
    return new Path[] {crt, key};
  }

  private static KeyExchangeException refused(Path[] c) {
    return assertThrows(KeyExchangeException.class, () -> Credential.load(c[0], c[1], null));
  }

  @Test
  void shouldRefuseAKeyInADirectoryGroupOrOthersMayWrite() throws Exception {
    Path dir = tmp.resolve("keys");
    Path[] c = credential(dir);
    for (String mode : new String[] {"rwxrwx---", "rwx---rwx", "rwxrwxrwx", "rwx-w----"}) {
      chmod(dir, mode);
      KeyExchangeException e = refused(c);
      assertEquals(KeyExchangeException.Reason.KEY_DIRECTORY_EXPOSED, e.reason(), e.getMessage());
      assertTrue(e.getMessage().contains(c[1].toString()), e.getMessage());
      assertTrue(e.getMessage().contains("directory " + dir), e.getMessage());
      assertTrue(e.getMessage().contains(mode), e.getMessage());
    }
    chmod(dir, "rwxr-xr-x"); // others may list and read, not write: fine
    assertNotNull(Credential.load(c[0], c[1], null));
  }

  @Test
  void shouldRefuseTheCaKeyInAWorldWritableCaDirectory() throws Exception {
    chmod(pki.dir, "rwxrwxrwx");
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.open(pki.dir, null));
    assertEquals(KeyExchangeException.Reason.KEY_DIRECTORY_EXPOSED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains(pki.dir.resolve(DeploymentCa.CA_KEY).toString()));
  }

  @Test
  void shouldAcceptAnOwnKeyInAStickyWorldWritableDirectoryLikeTmp() throws Exception {
    Path dir = tmp.resolve("shared");
    Path[] c = credential(dir);
    Files.setAttribute(dir, "unix:mode", 01777);
    assertNotNull(Credential.load(c[0], c[1], null), "others cannot rename or delete it there");
  }

  @Test
  void shouldRefuseALinkToAKeyFromADirectoryOthersMayWrite() throws Exception {
    Path[] c = credential(tmp.resolve("safe"));
    Path open = Files.createDirectories(tmp.resolve("open"));
    Path link = Files.createSymbolicLink(open.resolve("tls.key"), c[1]);
    chmod(open, "rwxrwxrwx");
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> Credential.load(c[0], link, null));
    assertEquals(KeyExchangeException.Reason.KEY_DIRECTORY_EXPOSED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains("directory " + open), e.getMessage());
    chmod(open, "rwx------");
    assertNotNull(Credential.load(c[0], link, null));
  }

  @Test
  void shouldRefuseAKeyOwnedByAnotherUser() throws Exception {
    assumeTrue(canChown(), "needs root (or CAP_CHOWN) to give a file to another user");
    Path[] c = credential(tmp.resolve("keys"));
    int mine = uid(c[1]);
    Files.setAttribute(c[1], "unix:uid", NOBODY);
    KeyExchangeException e = refused(c);
    assertEquals(KeyExchangeException.Reason.KEY_FILE_NOT_OWNED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains(c[1].toString()), e.getMessage());
    assertTrue(e.getMessage().contains("uid " + NOBODY), e.getMessage());
    Files.setAttribute(c[1], "unix:uid", mine);
    assertNotNull(Credential.load(c[0], c[1], null));
  }

  @Test
  void shouldRefuseAKeyInADirectoryAnotherUserOwns() throws Exception {
    assumeTrue(canChown(), "needs root (or CAP_CHOWN) to give a directory to another user");
    Path dir = tmp.resolve("theirs");
    Path[] c = credential(dir);
    Files.setAttribute(dir, "unix:uid", NOBODY);
    KeyExchangeException e = refused(c);
    assertEquals(KeyExchangeException.Reason.KEY_DIRECTORY_EXPOSED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains("uid " + NOBODY), e.getMessage());
  }
}
