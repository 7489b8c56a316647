package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attacker of {@link CrlRollbackTest} waits for a restart: the older list is put back while the
 * host is down. With a CRL-number file the highest number accepted survives the restart, and the
 * older list is refused by the new process too.
 */
class CrlNumberPersistenceTest {
  @TempDir Path tmp;
  private TestPki pki;
  private Path crlFile;
  private Path numberFile;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
    crlFile = pki.dir.resolve(DeploymentCa.CRL);
    numberFile = tmp.resolve("state").resolve("crl-number");
  }

  private RevocationList restarted() throws Exception {
    Files.createDirectories(numberFile.getParent());
    return RevocationList.watching(crlFile, pki.ca.certificate(), numberFile);
  }

  @Test
  void shouldRefuseAnOlderCrlPutBackWhileTheProcessWasDown() throws Exception {
    Path saved = tmp.resolve("old-crl.pem");
    Files.copy(crlFile, saved);
    Credential c = pki.peer("acme", "gone");
    pki.ca.revoke(c.certificate());
    RevocationList first = restarted();
    first.reload();
    assertTrue(Files.exists(numberFile), "the highest number is kept");
    assertEquals(
        "rw-------",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(numberFile)),
        "kept owner-only");
    assertTrue(
        Files.readString(numberFile, StandardCharsets.US_ASCII)
            .startsWith(first.number().toString() + " "),
        "number and digest");

    // the process stops; the old list (the peer not yet revoked) is put back; a new process starts
    Files.copy(saved, crlFile, StandardCopyOption.REPLACE_EXISTING);
    RevocationList second = restarted();
    KeyExchangeException e = assertThrows(KeyExchangeException.class, second::reload);
    assertEquals(KeyExchangeException.Reason.CRL_ROLLBACK, e.reason());
    // and it fails closed: nothing is accepted on the rolled-back list
    DeploymentTrust trust = DeploymentTrust.of(pki.ca.certificate(), second);
    KeyExchangeException refused =
        assertThrows(
            KeyExchangeException.class,
            () ->
                trust.verify(new X509Certificate[] {c.certificate()}, CertificateUsage.TLS_CLIENT));
    assertEquals(KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN, refused.reason());
  }

  @Test
  void shouldAcceptTheSameListAfterARestartAndANewerOne() throws Exception {
    RevocationList first = restarted();
    first.reload();
    RevocationList second = restarted();
    second.reload(); // same number, same list: fine
    assertEquals(first.number(), second.number());
    pki.ca.revoke(pki.peer("acme", "later").certificate());
    second.reload();
    assertTrue(second.number().compareTo(first.number()) > 0);
    assertTrue(
        Files.readString(numberFile, StandardCharsets.US_ASCII)
            .startsWith(second.number().toString() + " "));
  }

  @Test
  void shouldRefuseAMalformedNumberFileInsteadOfForgetting() throws Exception {
    Files.createDirectories(numberFile.getParent());
    Files.writeString(numberFile, "not a number\n");
    KeyExchangeException e = assertThrows(KeyExchangeException.class, this::restarted);
    assertEquals(KeyExchangeException.Reason.IO_ERROR, e.reason());
    assertTrue(e.getMessage().contains("malformed"), e.getMessage());
  }
}
