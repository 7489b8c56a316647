package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One host poses as another, a tenant peer poses as a host, a host poses as a tenant peer: each is
 * refused with its reason, the pinned client before it sends its own certificate.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostPinningTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
  }

  @Test
  void shouldConnectToThePinnedHost() throws Exception {
    try (TestTlsServer server = TestTlsServer.greeting(pki.server(pki.peer("host", "a")))) {
      MutualTls client =
          MutualTls.client(pki.peer("acme", "c"), pki.trust(), PeerIdentity.host("a"));
      try (SSLSocket s = client.connect(server.address(), TIMEOUT).socket()) {
        assertEquals(
            PeerIdentity.host("a"),
            PeerIdentity.fromCertificate(
                (java.security.cert.X509Certificate) s.getSession().getPeerCertificates()[0]));
      }
      assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome());
    }
  }

  @Test
  void shouldRefuseAnotherHostBeforeSendingTheClientCertificate() throws Exception {
    try (TestTlsServer server = TestTlsServer.greeting(pki.server(pki.peer("host", "b")))) {
      MutualTls client =
          MutualTls.client(pki.peer("acme", "c"), pki.trust(), PeerIdentity.host("a"));
      KeyExchangeException e =
          assertThrows(KeyExchangeException.class, () -> client.connect(server.address(), TIMEOUT));
      assertEquals(KeyExchangeException.Reason.UNEXPECTED_PEER, e.reason(), e.getMessage());
      // the impostor never saw a client certificate, so it authenticated nobody
      assertInstanceOf(KeyExchangeException.class, server.nextOutcome());
    }
  }

  @Test
  void shouldRefuseATenantCertificateActingAsHost() throws Exception {
    try (TestTlsServer server = TestTlsServer.greeting(pki.server(pki.peer("acme", "evil")))) {
      for (MutualTls client :
          new MutualTls[] {
            MutualTls.client(pki.peer("acme", "c"), pki.trust(), PeerIdentity.host("a")),
            MutualTls.client(pki.peer("acme", "d"), pki.trust())
          }) {
        KeyExchangeException e =
            assertThrows(
                KeyExchangeException.class, () -> client.connect(server.address(), TIMEOUT));
        assertEquals(KeyExchangeException.Reason.WRONG_USAGE, e.reason(), e.getMessage());
        server.nextOutcome();
      }
    }
  }

  @Test
  void shouldRefuseAHostCertificateActingAsTenantPeer() throws Exception {
    try (TestTlsServer server = TestTlsServer.greeting(pki.server(pki.peer("host", "a")))) {
      try {
        pki.client(pki.peer("host", "other")).connect(server.address(), TIMEOUT).socket().close();
      } catch (KeyExchangeException expected) {
        // in TLS 1.3 the client may finish before the server judges its certificate
      }
      KeyExchangeException e = assertInstanceOf(KeyExchangeException.class, server.nextOutcome());
      assertEquals(KeyExchangeException.Reason.WRONG_USAGE, e.reason(), e.getMessage());
    }
  }

  @Test
  void shouldRefuseToPinANonHostIdentity() {
    KeyExchangeException e =
        assertThrows(
            KeyExchangeException.class,
            () ->
                MutualTls.client(
                    pki.peer("acme", "c"), pki.trust(), PeerIdentity.of("acme", "server")));
    assertEquals(KeyExchangeException.Reason.BAD_ARGUMENT, e.reason());
  }
}
