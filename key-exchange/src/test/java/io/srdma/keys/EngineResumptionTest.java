package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resumption on the engine path (the host's and the SDK's event loops use {@link SSLEngine}, not
 * sockets): the second connection between the same two contexts is a full handshake whose
 * certificate is judged again, and should a caller turn tickets back on, a resumed engine is
 * refused by {@link MutualTls#authenticated(SSLEngine)} on both sides.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EngineResumptionTest {
  private static final String HOST = "host.example";
  private static final int PORT = 7471;

  @TempDir Path tmp;
  private TestPki pki;

  @BeforeEach
  void createCa() {
    pki = TestPki.create(tmp.resolve("ca"));
  }

  @Test
  void shouldJudgeTheCertificateAgainOnTheSecondEngineConnection() throws Exception {
    Credential peer = pki.peer("acme", "alpha");
    MutualTls server = pki.server(pki.peer("host", "h"));
    MutualTls client = pki.client(peer);

    Pair first = Pair.handshake(server, client);
    assertHandshook(first);
    AuthenticatedPeer seen = server.authenticated(first.server);
    assertEquals("alpha", seen.identity().peer());
    client.authenticated(first.client);
    first.exchangeAfterHandshake(); // lets a NewSessionTicket, were one sent, reach the client

    pki.ca.revoke(peer.certificate());
    Pair second = Pair.handshake(server, client);
    // a full handshake: the trust manager saw the certificate again, and it is revoked now
    assertNotNull(second.failure, "a revoked peer completed a handshake");
    KeyExchangeException e = MutualTls.failure(second.failure);
    assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED, e.reason(), e.getMessage());
  }

  @Test
  void shouldRefuseAResumedEngineOnBothSidesWhenTicketsAreTurnedBackOn() throws Exception {
    MutualTls server = pki.server(pki.peer("host", "h"));
    MutualTls client = pki.client(pki.peer("acme", "beta"));
    // a careless caller re-enables resumption on both contexts
    server.sslContext().getServerSessionContext().setSessionTimeout(3600);
    client.sslContext().getClientSessionContext().setSessionTimeout(3600);

    Pair first = Pair.handshake(server, client);
    assertHandshook(first);
    server.authenticated(first.server);
    client.authenticated(first.client);
    first.exchangeAfterHandshake();

    Pair second = Pair.handshake(server, client);
    assertHandshook(second);
    // RESUMPTION_REFUSED is only thrown where the trust manager verified no certificate
    KeyExchangeException onServer =
        assertThrows(KeyExchangeException.class, () -> server.authenticated(second.server));
    assertEquals(KeyExchangeException.Reason.RESUMPTION_REFUSED, onServer.reason());
    KeyExchangeException onClient =
        assertThrows(KeyExchangeException.class, () -> client.authenticated(second.client));
    assertEquals(KeyExchangeException.Reason.RESUMPTION_REFUSED, onClient.reason());
  }

  @Test
  void shouldSendNoSessionTicketByDefault() throws Exception {
    MutualTls server = pki.server(pki.peer("host", "h"));
    MutualTls client = pki.client(pki.peer("acme", "gamma"));
    Pair first = Pair.handshake(server, client);
    assertHandshook(first);
    server.authenticated(first.server);
    first.exchangeAfterHandshake();
    Pair second = Pair.handshake(server, client);
    assertHandshook(second);
    // both accept: the trust manager verified a certificate on this very connection (a resumed
    // one would be RESUMPTION_REFUSED)
    server.authenticated(second.server);
    client.authenticated(second.client);
  }

  private static void assertHandshook(Pair p) {
    SSLException failure = p.failure;
    if (failure != null) {
      throw new AssertionError("handshake failed: " + failure, failure);
    }
  }

  /** Two engines handshaking through in-memory buffers. */
  private static final class Pair {
    final SSLEngine server;
    final SSLEngine client;
    final ByteBuffer toServer;
    final ByteBuffer toClient;
    final ByteBuffer app;
    SSLException failure;

    private Pair(SSLEngine server, SSLEngine client) {
      this.server = server;
      this.client = client;
      int net = Math.max(server.getSession().getPacketBufferSize(), 1 << 15);
      toServer = ByteBuffer.allocate(net * 4);
      toClient = ByteBuffer.allocate(net * 4);
      app = ByteBuffer.allocate(Math.max(server.getSession().getApplicationBufferSize(), net) * 2);
    }

    static Pair handshake(MutualTls serverTls, MutualTls clientTls) {
      // the client's engine names host and port, so the JDK looks a cached session up
      Pair p = new Pair(serverTls.newEngine(null, -1), clientTls.newEngine(HOST, PORT));
      try {
        p.client.beginHandshake();
        p.server.beginHandshake();
        for (int i = 0; i < 200 && !(p.done(p.client) && p.done(p.server)); i++) {
          p.step(p.client, p.toServer, p.toClient);
          p.step(p.server, p.toClient, p.toServer);
        }
        if (!(p.done(p.client) && p.done(p.server))) {
          throw new AssertionError("the handshake did not finish");
        }
      } catch (SSLException e) {
        p.failure = e;
      }
      return p;
    }

    /** Moves post-handshake messages (tickets) from the server to the client. */
    void exchangeAfterHandshake() throws SSLException {
      for (int i = 0; i < 4; i++) {
        step(server, toClient, toServer);
        step(client, toServer, toClient);
      }
    }

    private boolean done(SSLEngine e) {
      HandshakeStatus s = e.getHandshakeStatus();
      return s == HandshakeStatus.NOT_HANDSHAKING || s == HandshakeStatus.FINISHED;
    }

    /** One engine writes what it has into {@code out} and reads what waits in {@code in}. */
    private void step(SSLEngine e, ByteBuffer out, ByteBuffer in) throws SSLException {
      ByteBuffer empty = ByteBuffer.allocate(0);
      for (int i = 0; i < 16; i++) {
        HandshakeStatus s = e.getHandshakeStatus();
        if (s == HandshakeStatus.NEED_TASK) {
          Runnable task;
          while ((task = e.getDelegatedTask()) != null) {
            task.run();
          }
        } else if (s == HandshakeStatus.NEED_WRAP) {
          e.wrap(empty, out);
        } else {
          break;
        }
      }
      in.flip();
      try {
        while (in.hasRemaining()) {
          SSLEngineResult r = e.unwrap(in, app);
          app.clear();
          if (r.getStatus() != SSLEngineResult.Status.OK) {
            break;
          }
          if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
            Runnable task;
            while ((task = e.getDelegatedTask()) != null) {
              task.run();
            }
          }
          if (e.getHandshakeStatus() == HandshakeStatus.NEED_WRAP) {
            e.wrap(empty, out);
          }
        }
      } finally {
        in.compact();
      }
    }
  }
}
