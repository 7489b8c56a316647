package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code openssl s_client} as an independent client against a listener built from {@link
 * MutualTls}: only TLS 1.3 with a valid, unrevoked certificate of this deployment gets through, and
 * every refusal carries the reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OpenSslTlsTest {
  private Path tmp;
  private TestPki pki;
  private TestTlsServer server;

  @BeforeAll
  void startServer(@TempDir Path dir) {
    OpenSsl.assumeAvailable();
    tmp = dir;
    pki = TestPki.create(tmp.resolve("ca"));
    server = TestTlsServer.greeting(pki.server(pki.peer("host", "server")));
  }

  @AfterAll
  void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private Path write(Credential c, String name) {
    Path cert = tmp.resolve(name + ".crt");
    c.writeTo(cert, tmp.resolve(name + ".key"), null);
    return cert;
  }

  private OpenSsl.Result sClient(String credentialName, String... extra) throws Exception {
    List<String> args = new ArrayList<>();
    args.add("s_client");
    args.add("-connect");
    args.add("127.0.0.1:" + server.port());
    args.add("-CAfile");
    args.add(pki.dir.resolve(DeploymentCa.CA_CERTIFICATE).toString());
    args.add("-verify_return_error");
    args.add("-ign_eof");
    if (credentialName != null) {
      args.add("-cert");
      args.add(tmp.resolve(credentialName + ".crt").toString());
      args.add("-key");
      args.add(tmp.resolve(credentialName + ".key").toString());
    }
    args.addAll(List.of(extra));
    return OpenSsl.run(args.toArray(new String[0]));
  }

  private void assertRefused(OpenSsl.Result client, KeyExchangeException.Reason reason)
      throws Exception {
    Object outcome = server.nextOutcome();
    KeyExchangeException e =
        assertInstanceOf(KeyExchangeException.class, outcome, "server outcome; client " + client);
    assertEquals(reason, e.reason(), e.getMessage());
    assertFalse(client.output.contains(TestTlsServer.GREETING), client.toString());
  }

  @Test
  void shouldAcceptAGoodCertificate() throws Exception {
    write(pki.peer("acme", "alpha"), "good");
    OpenSsl.Result client = sClient("good", "-tls1_3");
    AuthenticatedPeer peer =
        assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome(), client.toString());
    assertEquals(PeerIdentity.of("acme", "alpha"), peer.identity());
    assertTrue(client.output.contains(TestTlsServer.GREETING), client.toString());
    assertTrue(client.output.contains("TLSv1.3"), client.toString());
  }

  @Test
  void shouldRefuseTls12() throws Exception {
    write(pki.peer("acme", "old"), "tls12");
    assertRefused(sClient("tls12", "-tls1_2"), KeyExchangeException.Reason.PROTOCOL_VERSION);
  }

  @Test
  void shouldRefuseAClientWithoutCertificate() throws Exception {
    assertRefused(sClient(null, "-tls1_3"), KeyExchangeException.Reason.NO_CERTIFICATE);
  }

  @Test
  void shouldRefuseACertificateOfAForeignCa() throws Exception {
    TestPki foreign = TestPki.create(tmp.resolve("foreign-ca"));
    write(foreign.peer("acme", "alpha"), "foreign");
    assertRefused(sClient("foreign", "-tls1_3"), KeyExchangeException.Reason.UNTRUSTED_ISSUER);
  }

  @Test
  void shouldRefuseAnExpiredCertificate() throws Exception {
    write(pki.expired("acme", "late"), "expired");
    assertRefused(sClient("expired", "-tls1_3"), KeyExchangeException.Reason.CERTIFICATE_EXPIRED);
  }

  @Test
  void shouldRefuseANotYetValidCertificate() throws Exception {
    write(pki.notYetValid("acme", "early"), "early");
    assertRefused(
        sClient("early", "-tls1_3"), KeyExchangeException.Reason.CERTIFICATE_NOT_YET_VALID);
  }

  @Test
  void shouldRefuseARevokedCertificate() throws Exception {
    write(pki.revoked("acme", "gone"), "revoked");
    assertRefused(sClient("revoked", "-tls1_3"), KeyExchangeException.Reason.CERTIFICATE_REVOKED);
  }

  @Test
  void shouldRefuseAServerOnlyCertificateAsClient() throws Exception {
    write(pki.consoleServer("console.example"), "console");
    assertRefused(sClient("console", "-tls1_3"), KeyExchangeException.Reason.WRONG_USAGE);
  }
}
