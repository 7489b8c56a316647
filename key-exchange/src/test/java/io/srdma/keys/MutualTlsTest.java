package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MutualTlsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
  }

  @Test
  void shouldAuthenticateBothPeersAndDeriveEqualSessionKeys() throws Exception {
    byte[] sessionId = {9, 8, 7, 6};
    BlockingQueue<KeySchedule> serverKeys = new LinkedBlockingQueue<>();
    BlockingQueue<byte[]> serverBinding = new LinkedBlockingQueue<>();
    try (TestTlsServer server =
        new TestTlsServer(
            pki.server(pki.peer("host", "server")),
            peer -> {
              try (TlsBinding b = peer.binding(Role.RESPONDER)) {
                serverBinding.add(b.value().clone());
              }
              serverKeys.add(TestNegotiation.run(peer, Role.RESPONDER, sessionId, 0x2222));
            })) {
      AuthenticatedPeer client =
          pki.client(pki.peer("acme", "client")).connect(server.address(), TIMEOUT);
      try (SSLSocket s = client.socket()) {
        assertEquals(PeerIdentity.of("host", "server"), client.identity());
        byte[] binding;
        try (TlsBinding b = client.binding(Role.INITIATOR)) {
          assertEquals(TlsBinding.Kind.CERTIFICATE_TRANSCRIPT, b.kind());
          binding = b.value().clone();
        }
        try (KeySchedule mine = TestNegotiation.run(client, Role.INITIATOR, sessionId, 0x1111)) {
          AuthenticatedPeer seen = assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome());
          assertEquals(PeerIdentity.of("acme", "client"), seen.identity());
          assertArrayEquals(binding, serverBinding.poll(10, TimeUnit.SECONDS));
          try (KeySchedule theirs = serverKeys.poll(10, TimeUnit.SECONDS)) {
            assertArrayEquals(
                mine.sendKeys().aesKey().getEncoded(), theirs.receiveKeys(0).aesKey().getEncoded());
            assertArrayEquals(
                theirs.sendKeys().aesKey().getEncoded(), mine.receiveKeys(0).aesKey().getEncoded());
          }
        }
        assertEquals("TLSv1.3", s.getSession().getProtocol());
      }
    }
  }

  @Test
  void shouldRefuseARevokedClientWithTheReasonOnTheServer() throws Exception {
    try (TestTlsServer server =
        new TestTlsServer(pki.server(pki.peer("host", "server")), p -> {})) {
      MutualTls tls = pki.client(pki.revoked("acme", "gone"));
      try {
        tls.connect(server.address(), TIMEOUT).socket().close();
      } catch (KeyExchangeException expected) {
        // in TLS 1.3 the client may finish before the server judges its certificate
      }
      KeyExchangeException e = assertInstanceOf(KeyExchangeException.class, server.nextOutcome());
      assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, e.reason());
    }
  }

  @Test
  void shouldRefuseAServerOfAForeignCaWithTheReasonOnTheClient() throws Exception {
    TestPki foreign = TestPki.create(tmp.resolve("foreign"));
    try (TestTlsServer server =
        new TestTlsServer(foreign.server(foreign.peer("host", "server")), p -> {})) {
      KeyExchangeException e =
          assertThrows(
              KeyExchangeException.class,
              () -> pki.client(pki.peer("acme", "client")).connect(server.address(), TIMEOUT));
      assertEquals(KeyExchangeException.Reason.UNTRUSTED_ISSUER, e.reason());
    }
  }

  @Test
  void shouldRefuseAServerWhoseCertificateIsForClientsOnly() throws Exception {
    // a console certificate has serverAuth but no identity
    try (TestTlsServer server =
        new TestTlsServer(pki.server(pki.consoleServer("localhost")), p -> {})) {
      KeyExchangeException e =
          assertThrows(
              KeyExchangeException.class,
              () -> pki.client(pki.peer("acme", "client")).connect(server.address(), TIMEOUT));
      assertEquals(KeyExchangeException.Reason.NO_IDENTITY, e.reason());
    }
  }

  @Test
  void shouldRefuseAJdkTls12ClientWithProtocolVersion() throws Exception {
    Credential c = pki.peer("acme", "old");
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setKeyEntry("k", c.privateKey(), new char[0], new Certificate[] {c.certificate()});
    ks.setCertificateEntry("ca", pki.ca.certificate());
    KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
    kmf.init(ks, new char[0]);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
    tmf.init(ks);
    SSLContext jdk = SSLContext.getInstance("TLSv1.2");
    jdk.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
    try (TestTlsServer server =
        new TestTlsServer(pki.server(pki.peer("host", "server")), p -> {})) {
      try (SSLSocket s = (SSLSocket) jdk.getSocketFactory().createSocket()) {
        s.setSoTimeout(10_000);
        s.setEnabledProtocols(new String[] {"TLSv1.2"});
        s.connect(server.address(), 10_000);
        assertThrows(javax.net.ssl.SSLException.class, s::startHandshake);
      }
      KeyExchangeException e = assertInstanceOf(KeyExchangeException.class, server.nextOutcome());
      assertEquals(KeyExchangeException.Reason.PROTOCOL_VERSION, e.reason(), e.getMessage());
    }
  }

  @Test
  void shouldTimeOutAHandshakeThatNeverStarts() throws Exception {
    try (java.net.ServerSocket silent = new java.net.ServerSocket(0)) {
      InetSocketAddress addr =
          new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), silent.getLocalPort());
      KeyExchangeException e =
          assertThrows(
              KeyExchangeException.class,
              () -> pki.client(pki.peer("acme", "client")).connect(addr, Duration.ofMillis(300)));
      assertEquals(KeyExchangeException.Reason.HANDSHAKE_TIMEOUT, e.reason());
    }
  }

  @Test
  void shouldOfferOnlyTls13() {
    MutualTls tls = pki.server(pki.peer("host", "server"));
    assertArrayEquals(new String[] {"TLSv1.3"}, tls.parameters().getProtocols());
    assertEquals(true, tls.parameters().getNeedClientAuth());
  }
}
