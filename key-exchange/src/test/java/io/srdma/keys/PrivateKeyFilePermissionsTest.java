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
 * {@code ca.key} and {@code tls.key} are refused, unread, when group or others may access them, as
 * the audit key is: a key someone opened up (or copied in with the umask's {@code 644}) may have
 * been read by anyone on the machine. The writers create them {@code 600} ({@link
 * FilePermissionsTest}), so the default flows are unaffected.
 */
class PrivateKeyFilePermissionsTest {
  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void posixOnly() {
    assumeTrue(tmp.getFileSystem().supportedFileAttributeViews().contains("posix"));
    pki = TestPki.create(tmp.resolve("ca"));
  }

  private static void chmod(Path file, String mode) throws Exception {
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
  }

  private static void assertExposed(Path file, String mode, KeyExchangeException e) {
    assertEquals(KeyExchangeException.Reason.KEY_FILE_EXPOSED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    assertTrue(e.getMessage().contains(mode), e.getMessage());
  }

  @Test
  void shouldRefuseACaKeyItsGroupMayRead() throws Exception {
    // mode 0640 with the file's group another team's: that team reads the CA key
    Path key = pki.dir.resolve(DeploymentCa.CA_KEY);
    chmod(key, "rw-r-----");
    assertExposed(
        key,
        "rw-r-----",
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.open(pki.dir, null)));
    chmod(key, "rw-------");
    assertNotNull(DeploymentCa.open(pki.dir, null));
  }

  @Test
  void shouldRefuseATlsKeyOthersMayReadOrWriteEncryptedOrNot() throws Exception {
    Path crt = tmp.resolve("p.crt");
    Path key = tmp.resolve("p.key");
    pki.peer("acme", "p").writeTo(crt, key, "pass".toCharArray());
    for (String mode : new String[] {"rw----r--", "rw--w----", "rw-rw-rw-", "rwx------"}) {
      chmod(key, mode);
      assertExposed(
          key,
          mode,
          assertThrows(
              KeyExchangeException.class, () -> Credential.load(crt, key, "pass".toCharArray())));
    }
    chmod(key, "r--------");
    assertNotNull(Credential.load(crt, key, "pass".toCharArray()));
  }

  @Test
  void shouldJudgeASymlinkedKeyByTheFileItPointsTo() throws Exception {
    Path crt = tmp.resolve("p.crt");
    Path key = tmp.resolve("p.key");
    pki.peer("acme", "p").writeTo(crt, key, null);
    Path link = Files.createSymbolicLink(tmp.resolve("tls.key"), key);
    assertNotNull(Credential.load(crt, link, null), "a link to an owner-only key");
    chmod(key, "rw-r--r--");
    assertExposed(
        link,
        "rw-r--r--",
        assertThrows(KeyExchangeException.class, () -> Credential.load(crt, link, null)));
  }

  @Test
  void shouldSayAMissingKeyDoesNotExist() {
    Path missing = tmp.resolve("missing.key");
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> Pem.readPrivateKey(missing, null));
    assertEquals(KeyExchangeException.Reason.IO_ERROR, e.reason());
    assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
  }
}
