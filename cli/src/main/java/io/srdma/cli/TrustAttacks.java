package io.srdma.cli;

import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.HostStats;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocket;

/**
 * Attacks on who talks to whom (issue 14): a client without a certificate, a client that tries to
 * resume a TLS session, a tenant sent to the wrong host, a tenant certificate acting as a host.
 * Rows of {@link AttackSuite}, shared by {@code srdma demo} and {@code srdma attack-suite}. Not
 * thread-safe: one run at a time.
 */
final class TrustAttacks {
  private final AttackSuite suite;

  TrustAttacks(AttackSuite suite) {
    this.suite = suite;
  }

  void run(Path scratch) throws InterruptedException {
    suite.attempt("peer with no certificate", this::noCertificate);
    suite.attempt("resume a TLS session (client context reused)", this::resumption);
    suite.attempt("tenant pinned to another host name", this::otherHost);
    suite.attempt("tenant certificate acting as a host", this::tenantAsHost);
  }

  private AttackSuite.Target target() {
    return suite.target();
  }

  private void noCertificate() throws Exception {
    String what = "peer with no certificate";
    ForeignPeer.Refusal refusal =
        ForeignPeer.attempt(target().address(), null, target().trust(), AttackSuite.WAIT);
    if (refusal == null) {
      suite.row(what, "TLS refused by the host", "ACCEPTED", false);
      return;
    }
    suite.row(
        what,
        "TLS refused by the host",
        switch (refusal) {
          case BY_HOST -> "refused by the host after TCP connected";
          case BY_US -> "not tried: this side refused the host's certificate";
          case NO_CONNECTION -> "not tried: no connection";
        },
        refusal == ForeignPeer.Refusal.BY_HOST);
  }

  /**
   * The attacker turns its client's session cache back on and connects twice with one SSLContext:
   * the host issues no ticket and resumes nothing, so the second connection is a full handshake,
   * verified again.
   */
  private void resumption() throws Exception {
    String what = "resume a TLS session (client context reused)";
    MutualTls tls = MutualTls.client(target().attacker(), target().trust());
    SSLSessionContext cache = tls.sslContext().getClientSessionContext();
    cache.setSessionTimeout(3600);
    cache.setSessionCacheSize(16);
    SSLSession first;
    try (SSLSocket s = tls.connect(target().address(), AttackSuite.WAIT).socket()) {
      // a NewSessionTicket, were one sent, is read after the handshake: give it time to arrive
      s.setSoTimeout(300);
      try {
        s.getInputStream().read();
      } catch (SocketTimeoutException e) {
        // the host waits for our HELLO: nothing else to read
      }
      first = s.getSession();
    }
    // the JDK client keeps every TLS 1.3 session in its cache; only a ticket from the host would
    // let it offer a PSK, and a resumed session would carry the first one's identity and time
    int cached = java.util.Collections.list(cache.getIds()).size();
    SSLSession second;
    try (SSLSocket s = tls.connect(target().address(), AttackSuite.WAIT).socket()) {
      second = s.getSession();
    }
    boolean sameSession =
        Arrays.equals(first.getId(), second.getId())
            || first.getCreationTime() == second.getCreationTime();
    suite.row(
        what,
        "every connection a full handshake",
        "client cache held "
            + cached
            + " session(s); second handshake "
            + (sameSession ? "RESUMED " + HexFormat.of().formatHex(second.getId()) : "full"),
        !sameSession);
  }

  /** The tenant wants host X; the address leads to the target, which is not X. */
  private void otherHost() {
    String what = "tenant pinned to another host name";
    String other = "not-this-host-" + Integer.toHexString(new SecureRandom().nextInt());
    Supplier<HostStats> host = target().hostStats();
    long before = host == null ? 0 : host.get().sessionsOpened();
    ClientOptions o =
        new ClientOptions()
            .credential(target().attacker())
            .trust(target().trust())
            .host(target().address())
            .provider(target().provider())
            .hostIdentity(PeerIdentity.host(other));
    try (SecureRdmaClient c = SecureRdmaClient.connect(o)) {
      suite.row(what, "UNEXPECTED_PEER (nothing sent)", "CONNECTED to " + c.sessionId(), false);
    } catch (ChannelException e) {
      boolean refused = KeyExchangeException.Reason.UNEXPECTED_PEER.name().equals(e.detail());
      boolean noSession = host == null || host.get().sessionsOpened() == before;
      suite.row(
          what,
          "UNEXPECTED_PEER (nothing sent)",
          e.reason()
              + " "
              + e.detail()
              + (host == null ? "" : noSession ? ", no session at the host" : ", SESSION OPENED"),
          refused && noSession);
    }
  }

  /**
   * A fake host presents a tenant's certificate (clientAuth only): the victim's client must refuse
   * it, pinned or not.
   */
  private void tenantAsHost() throws Exception {
    String what = "tenant certificate acting as a host";
    MutualTls fake = MutualTls.server(target().attacker(), target().trust());
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    try (SSLServerSocket listener =
        fake.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4)) {
      Thread t =
          new Thread(
              () -> {
                try (SSLSocket s = (SSLSocket) listener.accept()) {
                  outcome.complete(fake.handshake(s, AttackSuite.WAIT));
                } catch (IOException | RuntimeException ex) {
                  outcome.complete(ex);
                }
              },
              "srdma-attack-fake-host");
      t.setDaemon(true);
      t.start();
      ClientOptions o =
          suite
              .options(target().victim())
              .host(
                  new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort()));
      String observed;
      boolean refused;
      try (SecureRdmaClient c = SecureRdmaClient.connect(o)) {
        observed = "CONNECTED to the fake host";
        refused = false;
      } catch (ChannelException e) {
        observed = e.reason() + " " + e.detail();
        refused = KeyExchangeException.Reason.WRONG_USAGE.name().equals(e.detail());
      }
      Object fakeSaw = outcome.get(AttackSuite.WAIT.toSeconds(), TimeUnit.SECONDS);
      boolean nobody = fakeSaw instanceof Exception;
      suite.row(
          what,
          "WRONG_USAGE, the fake host authenticates nobody",
          observed + (nobody ? ", fake host authenticated nobody" : ", FAKE HOST AUTHENTICATED"),
          refused && nobody);
      t.join(AttackSuite.WAIT.toMillis());
    }
  }
}
