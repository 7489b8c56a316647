package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** openssl reads what we write: certificates, CRLs, encrypted keys. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OpenSslPkiTest {
  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void createCa() {
    OpenSsl.assumeAvailable();
    pki = TestPki.create(tmp.resolve("ca"));
  }

  private OpenSsl.Result verify(Path cert) throws Exception {
    return OpenSsl.run(
        "verify",
        "-CAfile",
        pki.dir.resolve(DeploymentCa.CA_CERTIFICATE).toString(),
        "-crl_check",
        "-CRLfile",
        pki.dir.resolve(DeploymentCa.CRL).toString(),
        "-purpose",
        "sslclient",
        cert.toString());
  }

  @Test
  void shouldVerifyOurCertificatesAndCrlWithOpenSsl() throws Exception {
    Path good = tmp.resolve("good.crt");
    pki.peer("acme", "a").writeTo(good, tmp.resolve("good.key"), null);
    OpenSsl.Result ok = verify(good);
    assertEquals(0, ok.exitCode, ok.toString());
    OpenSsl.Result text = OpenSsl.run("x509", "-in", good.toString(), "-noout", "-text");
    assertTrue(text.output.contains("URI:srdma://acme/a"), text.toString());

    Path revoked = tmp.resolve("revoked.crt");
    pki.revoked("acme", "b").writeTo(revoked, tmp.resolve("revoked.key"), null);
    OpenSsl.Result refused = verify(revoked);
    assertNotEquals(0, refused.exitCode, refused.toString());
    assertTrue(refused.output.contains("revoked"), refused.toString());
  }

  @Test
  void shouldWriteEncryptedKeysThatOpenSslOpens() throws Exception {
    Path key = tmp.resolve("a.key");
    pki.peer("acme", "a").writeTo(tmp.resolve("a.crt"), key, "s3cret pass".toCharArray());
    OpenSsl.Result right =
        OpenSsl.run("pkey", "-in", key.toString(), "-passin", "pass:s3cret pass", "-noout");
    assertEquals(0, right.exitCode, right.toString());
    OpenSsl.Result wrong =
        OpenSsl.run("pkey", "-in", key.toString(), "-passin", "pass:nope", "-noout");
    assertNotEquals(0, wrong.exitCode, wrong.toString());
  }
}
