package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CA directory's files and PEM files handed to the commands may be hostile: a pipe (opening it
 * blocks until someone writes), or ASN.1 nested deep enough to overflow the parser's stack. Each is
 * a typed error naming the file, within the test's bound, never a hang or a {@link
 * StackOverflowError}. (Size limits and devices: {@link CaFileTamperingTest}.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostileCaFilesTest {
  @TempDir Path tmp;
  private Path dir;
  private DeploymentCa ca;

  @BeforeEach
  void ca() {
    dir = tmp.resolve("ca");
    ca = DeploymentCa.init(dir, null);
  }

  private static void mkfifo(Path p) throws Exception {
    Process proc = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
    assumeTrue(proc.waitFor(30, TimeUnit.SECONDS) && proc.exitValue() == 0, "needs mkfifo");
  }

  private static void assertRefused(
      KeyExchangeException.Reason reason, Path named, String says, Executable call) {
    KeyExchangeException e = assertThrows(KeyExchangeException.class, call);
    assertEquals(reason, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains(named.toString()), e.getMessage());
    assertTrue(e.getMessage().contains(says), e.getMessage());
  }

  /** {@code depth} nested indefinite-length SEQUENCEs as one PEM block of {@code type}. */
  private Path deep(String type, int depth) throws Exception {
    byte[] der = new byte[depth * 4];
    for (int i = 0; i < depth; i++) {
      der[2 * i] = 0x30;
      der[2 * i + 1] = (byte) 0x80;
    }
    Path p = tmp.resolve("deep-" + type.replace(' ', '-') + ".pem");
    Files.writeString(
        p,
        "-----BEGIN "
            + type
            + "-----\n"
            + Base64.getMimeEncoder().encodeToString(der)
            + "\n-----END "
            + type
            + "-----\n");
    return p;
  }

  @Test
  void shouldRefuseAsnNestedTooDeeplyInsteadOfOverflowingTheStack() throws Exception {
    // 400 KB, far below the 64 MiB limit
    Path cert = deep("CERTIFICATE", 100_000);
    assertRefused(
        KeyExchangeException.Reason.BAD_PEM,
        cert,
        "not valid PEM",
        () -> Pem.readCertificate(cert));
    Path crl = deep("X509 CRL", 100_000);
    assertRefused(
        KeyExchangeException.Reason.BAD_PEM, crl, "not valid PEM", () -> Pem.readCrl(crl));
    Path key = deep("PRIVATE KEY", 100_000);
    Files.setPosixFilePermissions(key, SecureFiles.OWNER_ONLY);
    assertRefused(
        KeyExchangeException.Reason.BAD_PEM,
        key,
        "not valid PEM",
        () -> Pem.readPrivateKey(key, null));
    // the CA in force is untouched, and a CA whose ca.crt is such a file does not open
    Files.delete(dir.resolve(DeploymentCa.CA_CERTIFICATE));
    Files.copy(cert, dir.resolve(DeploymentCa.CA_CERTIFICATE));
    assertRefused(
        KeyExchangeException.Reason.BAD_PEM,
        dir.resolve(DeploymentCa.CA_CERTIFICATE),
        "nests too deeply",
        () -> DeploymentCa.open(dir, null));
  }

  @Test
  void shouldRefuseACaCertificateThatIsAPipe() throws Exception {
    Path crt = dir.resolve(DeploymentCa.CA_CERTIFICATE);
    Files.delete(crt);
    mkfifo(crt);
    assertRefused(
        KeyExchangeException.Reason.IO_ERROR,
        crt,
        "not a regular file",
        () -> DeploymentCa.open(dir, null));
  }

  @Test
  void shouldRefuseAnIssuanceLogThatIsAPipeWhenRevokingOrIssuing() throws Exception {
    BigInteger serial =
        ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1))
            .certificate()
            .getSerialNumber();
    Path issued = dir.resolve(DeploymentCa.ISSUED);
    Files.delete(issued);
    mkfifo(issued);
    assertRefused(
        KeyExchangeException.Reason.IO_ERROR,
        issued,
        "not a regular file",
        () -> ca.revoke(serial));
    assertRefused(
        KeyExchangeException.Reason.IO_ERROR,
        issued,
        "not a regular file",
        () -> ca.issuePeer(PeerIdentity.of("acme", "b"), Duration.ofDays(1)));
  }

  @Test
  void shouldRefuseALockFileThatIsAPipe() throws Exception {
    BigInteger serial =
        ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1))
            .certificate()
            .getSerialNumber();
    Path lock = dir.resolve(".lock");
    Files.deleteIfExists(lock);
    mkfifo(lock);
    assertRefused(
        KeyExchangeException.Reason.IO_ERROR, lock, "not a regular file", () -> ca.revoke(serial));
  }
}
