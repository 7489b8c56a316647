package io.srdma.cli;

import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.HostStats;
import io.srdma.server.Addresses;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Attacks on a live session and before authentication (issues 14 and 15): a notification naming a
 * released grant's slot, a flood of empty notifications, idle connections holding the handshake
 * slots, a HELLO that names someone else's address as the responder. Rows of {@link AttackSuite},
 * shared by {@code srdma demo} and {@code srdma attack-suite}. Not thread-safe: one run at a time.
 */
final class SessionAttacks {
  /** Idle connections opened by the pre-authentication flood. */
  static final int IDLE_CONNECTIONS = 32;

  private final AttackSuite suite;

  SessionAttacks(AttackSuite suite) {
    this.suite = suite;
  }

  void run() throws InterruptedException {
    suite.attempt("notification naming a released grant's slot", this::staleSlot);
    suite.attempt("flood of zero-length WRITE_WITH_IMM", this::emptyNotificationFlood);
    suite.attempt("idle connections from one address, then a tenant", this::idleConnections);
    suite.attempt("HELLO naming another responder address", this::helloNamingAnother);
  }

  private AttackSuite.Target target() {
    return suite.target();
  }

  private void staleSlot() throws Exception {
    String what = "notification naming a released grant's slot";
    try (SecureRdmaClient c = suite.newClient(target().attacker())) {
      RemoteGrant released = suite.writeGrant(c, 0, 4096, Duration.ofMinutes(1));
      RemoteGrant live = suite.writeGrant(c, 8192, 4096, Duration.ofMinutes(1));
      released.release().toCompletableFuture().get(AttackSuite.WAIT.toSeconds(), TimeUnit.SECONDS);
      Supplier<HostStats> host = target().hostStats();
      long before = host == null ? 0 : host.get().staleNotifications();
      // a zero-length WRITE_WITH_IMM through the live grant's rkey, its immediate naming the
      // released grant's slot
      String status =
          AttackProbe.write(
              c,
              AttackProbe.remoteAddress(live),
              AttackProbe.rkey(live),
              null,
              0,
              AttackProbe.immediate(released, 0));
      if (!"SUCCESS".equals(status)) {
        suite.row(what, "host refuses: stale slot", "write " + status, false);
        return;
      }
      if (host == null) {
        suite.note(
            "sent",
            what,
            "host refuses: stale slot",
            "write SUCCESS; verdict in the host's audit log (access_violation, no live grant)");
        return;
      }
      boolean seen = AttackSuite.awaitQuietly(() -> host.get().staleNotifications() > before);
      suite.row(
          what,
          "host refuses: stale slot",
          seen ? "refused (staleNotifications +1, audited)" : "NOT REFUSED",
          seen);
    }
  }

  /** Empty notifications cost the host work and an audit line each: the session must end. */
  private void emptyNotificationFlood() throws Exception {
    String what = "flood of zero-length WRITE_WITH_IMM";
    String expected = "host ends the session";
    Supplier<HostStats> host = target().hostStats();
    long terminated = host == null ? 0 : host.get().sessionsTerminated();
    try (SecureRdmaClient c = suite.newClient(target().attacker())) {
      RemoteGrant g = suite.writeGrant(c, 0, 4096, Duration.ofMinutes(1));
      int sent = 0;
      String stoppedBy = "none";
      for (int i = 0; i < 4096; i++) {
        String s;
        try {
          s = AttackProbe.write(c, 0, 0, null, 0, AttackProbe.immediate(g, 0));
        } catch (ChannelException e) {
          stoppedBy = e.reason().name();
          break;
        }
        if (!"SUCCESS".equals(s)) {
          stoppedBy = s;
          break;
        }
        sent++;
      }
      boolean closed = AttackSuite.awaitQuietly(() -> !c.isOpen());
      String next;
      try {
        g.writeBlocking(0, ByteBuffer.wrap(new byte[8]));
        next = "next write SUCCEEDED";
      } catch (ChannelException e) {
        next = "next write " + e.reason();
      }
      boolean counted =
          host == null
              || AttackSuite.awaitQuietly(() -> host.get().sessionsTerminated() > terminated);
      suite.row(
          what,
          expected,
          (closed ? "session ended" : "SESSION STILL OPEN")
              + " after "
              + sent
              + " sent ("
              + stoppedBy
              + "), "
              + next
              + (host == null ? "" : counted ? ", sessionsTerminated +1" : ", NOT COUNTED"),
          closed && counted && !next.endsWith("SUCCEEDED"));
    }
  }

  /**
   * The flooder needs an address of its own (the host counts pending handshakes per address):
   * 127.0.0.2 when the target is on loopback; against another host there is none to take.
   */
  private static InetAddress flooderAddress(InetSocketAddress target) throws IOException {
    InetAddress t = target.getAddress();
    if (t == null || !t.isLoopbackAddress() || !(t instanceof Inet4Address)) {
      return null;
    }
    return InetAddress.getByAddress(new byte[] {127, 0, 0, 2});
  }

  private void idleConnections() throws Exception {
    String what = "idle connections from one address, then a tenant";
    String expected = "tenant served";
    InetAddress flooder = flooderAddress(target().address());
    if (flooder == null) {
      suite.note(
          "skip",
          what,
          expected,
          "needs a second source address: run against a host on 127.0.0.1 (the flood comes from"
              + " 127.0.0.2)");
      return;
    }
    Supplier<HostStats> host = target().hostStats();
    HostStats before = host == null ? null : host.get();
    List<Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < IDLE_CONNECTIONS; i++) {
        Socket s = new Socket();
        idle.add(s);
        s.bind(new InetSocketAddress(flooder, 0));
        s.connect(target().address(), (int) AttackSuite.WAIT.toMillis());
      }
      String served;
      boolean ok;
      try (SecureRdmaClient c = suite.newClient(target().attacker())) {
        RemoteGrant g = suite.writeGrant(c, 0, 4096, Duration.ofSeconds(30));
        g.writeBlocking(0, ByteBuffer.wrap(new byte[100]));
        served = "tenant served while " + IDLE_CONNECTIONS + " idle connections were open";
        ok = true;
      } catch (ChannelException e) {
        served = "tenant REFUSED: " + e.reason() + " " + e.detail();
        ok = false;
      }
      if (host != null) {
        // the host refuses most at accept and drops the rest at the first-record deadline
        boolean dropped =
            AttackSuite.awaitQuietly(
                () -> host.get().handshakeDeadlines() > before.handshakeDeadlines());
        long refused = host.get().rateLimited() - before.rateLimited();
        served +=
            ", "
                + refused
                + " refused at accept, "
                + (host.get().handshakeDeadlines() - before.handshakeDeadlines())
                + " dropped at the first-record deadline";
        ok &= dropped && refused > 0;
      }
      suite.row(what, expected, served, ok);
    } finally {
      for (Socket s : idle) {
        s.close();
      }
    }
  }

  /**
   * A HELLO whose connection information names an address that is not the peer's own: the host
   * would otherwise connect there (a port scan or request forgery through the host). On loopback
   * the named address is a listener here that must never see a connection; against another host the
   * name is the host's own 127.0.0.1, and the refusal is the verdict.
   */
  private void helloNamingAnother() throws Exception {
    String what = "HELLO naming another responder address";
    String expected = "ERROR PROTOCOL_VIOLATION, no connection made";
    InetAddress other = flooderAddress(target().address());
    Supplier<HostStats> host = target().hostStats();
    long before = host == null ? 0 : host.get().responderRefusals();
    try (ServerSocket victim = new ServerSocket()) {
      victim.bind(
          new InetSocketAddress(other == null ? InetAddress.getLoopbackAddress() : other, 0));
      InetSocketAddress named =
          new InetSocketAddress(
              other == null ? InetAddress.getLoopbackAddress() : other, victim.getLocalPort());
      String answer =
          AttackProbe.helloNaming(
              target().attacker(), target().trust(), target().address(), named, AttackSuite.WAIT);
      boolean refused = answer.startsWith("ERROR PROTOCOL_VIOLATION");
      String connected = "";
      boolean none = true;
      if (other != null) {
        victim.setSoTimeout(300);
        try (Socket s = victim.accept()) {
          none = false;
          connected = ", HOST CONNECTED to " + Addresses.format(named);
        } catch (SocketTimeoutException e) {
          connected = ", " + Addresses.format(named) + " saw no connection";
        }
      }
      boolean counted =
          host == null || AttackSuite.awaitQuietly(() -> host.get().responderRefusals() > before);
      suite.row(
          what,
          expected,
          answer + connected + (host == null ? "" : counted ? "" : ", NOT COUNTED"),
          refused && none && counted);
    }
  }
}
