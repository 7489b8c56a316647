package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Files of a CA directory or PEM inputs replaced by something else. */
class CaFileTamperingTest {
  @TempDir Path tmp;

  @Test
  void shouldRefuseToOpenACaWhoseKeyIsNotTheCertificatesKey() throws Exception {
    Path dir = tmp.resolve("ca");
    DeploymentCa.init(dir, null);
    Path other = tmp.resolve("other");
    DeploymentCa.init(other, null);
    Files.copy(
        other.resolve(DeploymentCa.CA_KEY),
        dir.resolve(DeploymentCa.CA_KEY),
        StandardCopyOption.REPLACE_EXISTING);
    // without the check the CA opens and signs certificates and revocation lists that no peer
    // accepts: a revoke "succeeds" but every host refuses the new list and keeps the old one
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> DeploymentCa.open(dir, null));
    assertEquals(KeyExchangeException.Reason.BAD_PEM, e.reason());
    assertTrue(e.getMessage().contains(DeploymentCa.CA_KEY), e.getMessage());
  }

  @Test
  void shouldRefuseAPemFileTooLargeToReadWithATypedError() throws Exception {
    Path huge = tmp.resolve("huge.pem");
    try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
      f.setLength(3L << 30); // sparse: takes no disk
    }
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> Pem.readCertificate(huge));
    assertTrue(e.getMessage().contains("huge.pem"), e.getMessage());
  }

  @Test
  void shouldRefuseADeviceAsAPemFileWithATypedError() {
    Path zero = Path.of("/dev/zero");
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(zero));
    KeyExchangeException e = assertThrows(KeyExchangeException.class, () -> Pem.readCrl(zero));
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
  }

  @Test
  void shouldLeaveNoKeyBehindWhenTheCertificateCannotBeWritten() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    Credential c = ca.issuePeer(PeerIdentity.of("acme", "p1"), java.time.Duration.ofDays(1));
    Path out = Files.createDirectories(tmp.resolve("out"));
    Path crt = out.resolve("acme.p1.crt");
    Path key = out.resolve("acme.p1.key");
    // a dangling link: Files.exists follows it and says no, CREATE_NEW then refuses it
    Files.createSymbolicLink(crt, tmp.resolve("nowhere"));
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> c.writeTo(crt, key, null));
    assertEquals(KeyExchangeException.Reason.FILE_EXISTS, e.reason());
    assertTrue(
        !Files.exists(key, java.nio.file.LinkOption.NOFOLLOW_LINKS),
        "the private key was written although the credential was refused");
  }

  @Test
  void shouldRefuseAHugeHighWaterMarkFileWithATypedError() throws Exception {
    Path mark = tmp.resolve("crl-number");
    try (RandomAccessFile f = new RandomAccessFile(mark.toFile(), "rw")) {
      f.setLength(3L << 30); // sparse
    }
    Files.setPosixFilePermissions(
        mark, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> HighWaterMark.read(mark, "CRL number"));
    assertEquals(KeyExchangeException.Reason.IO_ERROR, e.reason());
  }
}
