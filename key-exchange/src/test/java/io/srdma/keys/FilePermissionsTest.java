package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every file the CA writes gets its permissions explicitly: 600 for keys and the lock, 644 for
 * public files. The umask of this JVM cannot be changed from inside it; the CLI test runs {@code
 * srdma ca init} under {@code umask 000} in a child process for that.
 */
class FilePermissionsTest {
  private static String perms(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  @Test
  void shouldCreateEveryCaFileWithExplicitPermissions(@TempDir Path dir) throws Exception {
    Path caDir = dir.resolve("ca");
    DeploymentCa ca = DeploymentCa.init(caDir, null);
    Credential peer = ca.issuePeer(PeerIdentity.of("acme", "p1"), Duration.ofDays(1));
    assertEquals("rwx------", perms(caDir));
    assertEquals("rw-------", perms(caDir.resolve(DeploymentCa.CA_KEY)));
    assertEquals("rw-r--r--", perms(caDir.resolve(DeploymentCa.CA_CERTIFICATE)));
    assertEquals("rw-r--r--", perms(caDir.resolve(DeploymentCa.CRL)));
    assertEquals("rw-r--r--", perms(caDir.resolve(DeploymentCa.ISSUED)));
    assertEquals("rw-------", perms(caDir.resolve(".lock")));

    ca.revoke(peer.certificate());
    assertEquals("rw-r--r--", perms(caDir.resolve(DeploymentCa.CRL)), "after replacing it");
    ca.republishCrl();
    assertEquals("rw-r--r--", perms(caDir.resolve(DeploymentCa.CRL)));

    peer.writeTo(dir.resolve("p1.crt"), dir.resolve("p1.key"), null);
    assertEquals("rw-r--r--", perms(dir.resolve("p1.crt")));
    assertEquals("rw-------", perms(dir.resolve("p1.key")));
    peer.writeTo(dir.resolve("p2.crt"), dir.resolve("p2.key"), "pass".toCharArray());
    assertEquals("rw-------", perms(dir.resolve("p2.key")));
  }
}
