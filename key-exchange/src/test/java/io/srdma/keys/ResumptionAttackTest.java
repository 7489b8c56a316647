package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attacker holding a TLS 1.3 session (ticket) from before a revocation, or no certificate at
 * all, tries to resume it. Resumption is off (no ticket is issued, none is kept), and should a
 * caller turn tickets back on through {@link MutualTls#sslContext()}, a resumed handshake is still
 * refused: trust is decided on every connection.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ResumptionAttackTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
  }

  private Path write(Credential c, String name) {
    Path cert = tmp.resolve(name + ".crt");
    c.writeTo(cert, tmp.resolve(name + ".key"), null);
    return cert;
  }

  private OpenSsl.Result sClient(TestTlsServer server, String credential, String... extra)
      throws Exception {
    List<String> args = new ArrayList<>();
    args.addAll(
        List.of(
            "s_client",
            "-connect",
            "127.0.0.1:" + server.port(),
            "-CAfile",
            pki.dir.resolve(DeploymentCa.CA_CERTIFICATE).toString(),
            "-verify_return_error",
            "-ign_eof",
            "-tls1_3"));
    if (credential != null) {
      args.addAll(
          List.of(
              "-cert",
              tmp.resolve(credential + ".crt").toString(),
              "-key",
              tmp.resolve(credential + ".key").toString()));
    }
    args.addAll(List.of(extra));
    return OpenSsl.run(args.toArray(new String[0]));
  }

  /** A server whose caller turned session tickets back on, to reach the second defence. */
  private MutualTls serverWithTickets() {
    MutualTls tls = pki.server(pki.peer("host", "h"));
    tls.sslContext().getServerSessionContext().setSessionTimeout(3600);
    return tls;
  }

  @Test
  void shouldIssueNoSessionTicketSoOpensslCannotResume() throws Exception {
    OpenSsl.assumeAvailable();
    write(pki.peer("acme", "alpha"), "good");
    Path session = tmp.resolve("session.pem");
    try (TestTlsServer server = TestTlsServer.greeting(pki.server(pki.peer("host", "h")))) {
      OpenSsl.Result first = sClient(server, "good", "-sess_out", session.toString());
      assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome(), first.toString());
      assertTrue(first.output.contains(TestTlsServer.GREETING), first.toString());
      // openssl saves a TLS 1.3 session only when a NewSessionTicket arrives: none did
      assertFalse(first.output.contains("Post-Handshake New Session Ticket"), first.toString());
      assertFalse(Files.exists(session), "no session ticket was issued");

      // a real ticket (from a host whose caller turned tickets on), offered to this host with and
      // without a certificate: never resumed
      try (TestTlsServer other = TestTlsServer.greeting(serverWithTickets())) {
        sClient(other, "good", "-sess_out", session.toString());
        assertInstanceOf(AuthenticatedPeer.class, other.nextOutcome());
      }
      assertTrue(Files.exists(session), "the other host issued a ticket");
      OpenSsl.Result again = sClient(server, "good", "-sess_in", session.toString());
      assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome(), again.toString());
      assertTrue(again.output.contains("New, TLSv1.3"), again.toString());
      assertFalse(again.output.contains("Reused"), again.toString());
      OpenSsl.Result certless = sClient(server, null, "-sess_in", session.toString());
      KeyExchangeException e =
          assertInstanceOf(KeyExchangeException.class, server.nextOutcome(), certless.toString());
      assertEquals(KeyExchangeException.Reason.NO_CERTIFICATE, e.reason(), e.getMessage());
      assertFalse(certless.output.contains(TestTlsServer.GREETING), certless.toString());
    }
  }

  @Test
  void shouldRefuseARevokedPeerResumingATicketFromBeforeTheRevocation() throws Exception {
    OpenSsl.assumeAvailable();
    Credential peer = pki.peer("acme", "soon-gone");
    write(peer, "victim");
    Path session = tmp.resolve("ticket.pem");
    try (TestTlsServer server = TestTlsServer.greeting(serverWithTickets())) {
      OpenSsl.Result first = sClient(server, "victim", "-sess_out", session.toString());
      assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome(), first.toString());
      OpenSsl.Result shown = OpenSsl.run("sess_id", "-in", session.toString(), "-text");
      assertTrue(shown.output.contains("TLS session ticket"), "ticket issued: " + shown);

      pki.ca.revoke(peer.certificate());
      OpenSsl.Result resumed = sClient(server, "victim", "-sess_in", session.toString());
      KeyExchangeException e =
          assertInstanceOf(KeyExchangeException.class, server.nextOutcome(), resumed.toString());
      assertEquals(KeyExchangeException.Reason.RESUMPTION_REFUSED, e.reason(), e.getMessage());
      assertFalse(resumed.output.contains(TestTlsServer.GREETING), resumed.toString());

      OpenSsl.Result certless = sClient(server, null, "-sess_in", session.toString());
      e = assertInstanceOf(KeyExchangeException.class, server.nextOutcome(), certless.toString());
      assertEquals(KeyExchangeException.Reason.RESUMPTION_REFUSED, e.reason(), e.getMessage());
      assertFalse(certless.output.contains(TestTlsServer.GREETING), certless.toString());
    }
  }

  @Test
  void shouldRefuseACertlessResumeOfAValidPeersTicket() throws Exception {
    OpenSsl.assumeAvailable();
    write(pki.peer("acme", "alpha"), "alpha");
    Path session = tmp.resolve("stolen.pem");
    try (TestTlsServer server = TestTlsServer.greeting(serverWithTickets())) {
      sClient(server, "alpha", "-sess_out", session.toString());
      assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome());
      // the ticket alone, e.g. stolen from the peer's memory, is no credential
      OpenSsl.Result certless = sClient(server, null, "-sess_in", session.toString());
      KeyExchangeException e =
          assertInstanceOf(KeyExchangeException.class, server.nextOutcome(), certless.toString());
      assertEquals(KeyExchangeException.Reason.RESUMPTION_REFUSED, e.reason(), e.getMessage());
      assertFalse(certless.output.contains(TestTlsServer.GREETING), certless.toString());
    }
  }

  @Test
  void shouldMakeAJavaClientReconnectWithAFullHandshakeVerifiedAgain() throws Exception {
    Credential peer = pki.peer("acme", "beta");
    MutualTls client = pki.client(peer); // one SSLContext for both connections
    try (TestTlsServer server = TestTlsServer.greeting(pki.server(pki.peer("host", "h")))) {
      try (SSLSocket s = client.connect(server.address(), TIMEOUT).socket()) {
        s.getInputStream().read(); // lets a NewSessionTicket, were one sent, reach the client
      }
      assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome());
      pki.ca.revoke(peer.certificate());
      try {
        client.connect(server.address(), TIMEOUT).socket().close();
      } catch (KeyExchangeException expected) {
        // in TLS 1.3 the client may finish before the server judges its certificate
      }
      // a full handshake: the certificate was judged again, and is now revoked
      KeyExchangeException e = assertInstanceOf(KeyExchangeException.class, server.nextOutcome());
      assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, e.reason(), e.getMessage());
    }
  }

  @Test
  void shouldRefuseAResumedSessionOnTheClientSideToo() throws Exception {
    // both contexts re-enabled by a careless caller: the client still refuses what it resumed
    MutualTls server = serverWithTickets();
    MutualTls client = pki.client(pki.peer("acme", "gamma"));
    client.sslContext().getClientSessionContext().setSessionTimeout(3600);
    try (TestTlsServer listener = TestTlsServer.greeting(server)) {
      // connect by host name so the JDK client looks its session up
      java.net.InetSocketAddress byName =
          new java.net.InetSocketAddress("localhost", listener.port());
      try (SSLSocket s = client.connect(byName, TIMEOUT).socket()) {
        s.getInputStream().read();
      }
      assertInstanceOf(AuthenticatedPeer.class, listener.nextOutcome());
      KeyExchangeException e =
          assertThrows(KeyExchangeException.class, () -> client.connect(byName, TIMEOUT));
      assertEquals(KeyExchangeException.Reason.RESUMPTION_REFUSED, e.reason(), e.getMessage());
    }
  }
}
