package io.srdma.cli;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.HostStats;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.server.Addresses;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The attacks of DESIGN.md §7 that a network peer can try against a running host, each reported as
 * one row: what was tried, what a secure host does, what happened. Used by {@code srdma demo}
 * (against its own host, which it can also inspect) and {@code srdma attack-suite} (against any
 * host, given certificates of two tenants). The rows of issues 14 and 15 are in {@link
 * TrustAttacks} and {@link SessionAttacks}, which share this class's row and set-up plumbing; those
 * only an operator of the host can run are in {@link DemoAttacks}.
 */
final class AttackSuite {
  /**
   * One outcome.
   *
   * @param ok false only when the outcome was not the expected one (fails the run)
   * @param mark what to print before the row: {@code ok}, {@code FAIL}, {@code skip} (not tried: an
   *     optional credential was not given) or {@code sent} (tried; the verdict is only in the
   *     host's audit log, so it is not claimed as refused)
   */
  record Row(boolean ok, String what, String expected, String observed, String mark) {}

  /**
   * Who attacks what.
   *
   * @param address the host's control-plane address
   * @param trust the deployment's CA (and CRL)
   * @param attacker a peer with a WRITE-capable role on {@code region}
   * @param region a region of the attacker's tenant
   * @param victim a peer of another tenant that can get a grant on {@code victimRegion}
   * @param victimRegion a region of the victim's tenant
   * @param narrow a peer of the attacker's tenant whose role may not WRITE {@code region}, or null
   * @param provider the RDMA provider clients use
   * @param hostStats the host's counters when the host can be inspected, else null (record attacks
   *     then report what was sent; the verdict is in the host's audit log)
   */
  record Target(
      InetSocketAddress address,
      PeerIdentity hostIdentity,
      DeploymentTrust trust,
      Credential attacker,
      String region,
      Credential victim,
      String victimRegion,
      Credential narrow,
      String provider,
      Supplier<HostStats> hostStats) {}

  static final Duration WAIT = Duration.ofSeconds(10);
  private final Target target;
  private final Consumer<Row> out;
  private final List<SecureRdmaClient> clients = new ArrayList<>();
  private boolean allExpected = true;

  AttackSuite(Target target, Consumer<Row> out) {
    this.target = target;
    this.out = out;
  }

  /** An attack whose set-up may fail; a failed set-up is a FAIL row, never a pass. */
  @FunctionalInterface
  interface Attack {
    void run() throws Exception;
  }

  /**
   * Proves that a live srdma host answers at the target before any attack is tried: the attacker's
   * credential completes mutual TLS with the deployment's CA and the srdma session handshake. A
   * suite run against a closed port or another service would otherwise report refusals that nobody
   * made.
   *
   * @throws TargetUnavailableException saying, in words, why no srdma host answered
   */
  void proveTarget() {
    try (SecureRdmaClient probe = newClient(target.attacker())) {
      probe.sessionId();
    } catch (ChannelException | KeyExchangeException e) {
      throw new TargetUnavailableException(
          "no srdma host answers at "
              + Addresses.format(target.address())
              + " with the given CA and --attacker credential: "
              + Addresses.plainCause(e),
          e);
    }
  }

  /** No srdma host answered at the target; nothing was tried. */
  static final class TargetUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TargetUnavailableException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Runs every attack; true when every outcome was the expected one. Call {@link #proveTarget}
   * first.
   */
  boolean run(Path scratch) throws Exception {
    try {
      attempt("peer with a foreign CA's certificate", () -> foreignCertificate(scratch));
      attempt("guessed rkey (ReDMArk)", this::guessedRkey);
      attempt("another tenant's rkey and address (PD check)", this::crossTenantRkey);
      attempt("write past the grant", this::bounds);
      attempt("READ with a write-only grant, checks skipped", this::readWithWriteOnlyGrant);
      attempt("peer with a narrower role asks to WRITE", this::narrowerRole);
      attempt("released and expired grants", this::releasedAndExpiredGrants);
      attempt("record attacks", this::records);
      attempt("sessions beyond the tenant's quota", this::flood);
      attempt("malformed control frame (an HTTP request)", this::malformedFrame);
      new TrustAttacks(this).run(scratch);
      new SessionAttacks(this).run();
    } finally {
      for (SecureRdmaClient c : clients) {
        c.close();
      }
    }
    return allExpected;
  }

  /**
   * Runs one attack; when its set-up fails (the host went away, a grant the attack needs was
   * refused) the attack is reported as failed, naming what went wrong, and the next one runs.
   */
  void attempt(String what, Attack attack) throws InterruptedException {
    try {
      attack.run();
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      row(what, "the attack's set-up to succeed", "could not set up: " + plain(e), false);
    }
  }

  static String plain(Exception e) {
    if (e instanceof ChannelException c) {
      return c.reason() + " " + c.detail();
    }
    return Addresses.plainCause(e);
  }

  /** Who attacks what. */
  Target target() {
    return target;
  }

  /** A client of {@code who} that the caller closes. */
  SecureRdmaClient newClient(Credential who) {
    return SecureRdmaClient.connect(options(who));
  }

  /** A client of {@code who}, closed when the run ends. */
  SecureRdmaClient connect(Credential who) {
    // the host frees the quota of sessions an earlier row closed (the flood) when it has processed
    // their close, a moment later: a set-up refused for quota is tried again within WAIT
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      try {
        SecureRdmaClient c = newClient(who);
        clients.add(c);
        return c;
      } catch (ChannelException e) {
        if (e.reason() != ChannelException.Reason.QUOTA_EXCEEDED || System.nanoTime() > deadline) {
          throw e;
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /** A client of {@code who}, pinned to the target host when its identity is known. */
  ClientOptions options(Credential who) {
    ClientOptions o =
        new ClientOptions()
            .credential(who)
            .trust(target.trust())
            .host(target.address())
            .provider(target.provider());
    return target.hostIdentity() == null
        ? o.anyHostForDevelopment()
        : o.hostIdentity(target.hostIdentity());
  }

  RemoteGrant writeGrant(SecureRdmaClient c, long offset, long length, Duration ttl) {
    return c.grant(target.region(), EnumSet.of(Access.WRITE), offset, length, ttl);
  }

  void row(String what, String expected, String observed, boolean ok) {
    allExpected &= ok;
    out.accept(new Row(ok, what, expected, observed, ok ? "ok" : "FAIL"));
  }

  /** A row that neither passes nor fails: not tried, or not observable from here. */
  void note(String mark, String what, String expected, String observed) {
    out.accept(new Row(true, what, expected, observed, mark));
  }

  private void remote(String what, String status) {
    row(what, "REM_ACCESS_ERR", status, "REM_ACCESS_ERR".equals(status));
  }

  private void foreignCertificate(Path scratch) throws Exception {
    DeploymentCa foreign = DeploymentCa.init(scratch.resolve("foreign-ca"), null);
    String what = "peer with a foreign CA's certificate";
    // the attacker checks the host against the real deployment, so a refusal can only be the host's
    ForeignPeer.Refusal refusal =
        ForeignPeer.attempt(
            target.address(),
            foreign.issuePeer(PeerIdentity.of("acme", "mallory"), Duration.ofDays(1)),
            target.trust(),
            WAIT);
    if (refusal == null) {
      row(what, "TLS refused by the host", "ACCEPTED", false);
    } else {
      row(
          what,
          "TLS refused by the host",
          switch (refusal) {
            case BY_HOST -> "refused by the host";
            case BY_US -> "not tried: this side refused the host's certificate";
            case NO_CONNECTION -> "not tried: no connection";
          },
          refusal == ForeignPeer.Refusal.BY_HOST);
    }
  }

  private void guessedRkey() {
    SecureRdmaClient c = connect(target.attacker());
    RemoteGrant own = writeGrant(c, 0, 4096, Duration.ofMinutes(1));
    int guess = AttackProbe.rkey(own) ^ (1 + new SecureRandom().nextInt(Integer.MAX_VALUE));
    remote(
        "guessed rkey (ReDMArk)",
        AttackProbe.write(
            c,
            AttackProbe.remoteAddress(own),
            guess,
            new byte[8],
            8,
            AttackProbe.immediate(own, 0)));
  }

  private void crossTenantRkey() {
    SecureRdmaClient victim = connect(target.victim());
    RemoteGrant stolen =
        victim.grant(
            target.victimRegion(), EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    SecureRdmaClient thief = connect(target.attacker());
    remote(
        "another tenant's rkey and address (PD check)",
        AttackProbe.write(
            thief,
            AttackProbe.remoteAddress(stolen),
            AttackProbe.rkey(stolen),
            new byte[64],
            64,
            AttackProbe.immediate(stolen, 0)));
  }

  private void bounds() {
    SecureRdmaClient c = connect(target.attacker());
    RemoteGrant small = writeGrant(c, 8192, 4096, Duration.ofMinutes(1));
    failure(
        "write 1 byte past the grant (writer's check)",
        ChannelException.Reason.OUT_OF_BOUNDS,
        () -> small.writeBlocking(4096 - 36, ByteBuffer.wrap(new byte[1])));
    failure(
        "write at an overflowing offset",
        ChannelException.Reason.OUT_OF_BOUNDS,
        () -> small.writeBlocking(Long.MAX_VALUE - 2, ByteBuffer.wrap(new byte[8])));
    failure(
        "READ with a write-only grant (writer's check)",
        ChannelException.Reason.NOT_PERMITTED,
        () -> small.readBlocking(0, 100));
    remote(
        "write 1 byte past the grant, checks skipped",
        AttackProbe.write(
            c,
            AttackProbe.remoteAddress(small) + 4096,
            AttackProbe.rkey(small),
            new byte[1],
            1,
            0));
  }

  private void readWithWriteOnlyGrant() {
    SecureRdmaClient c = connect(target.attacker());
    RemoteGrant wo = writeGrant(c, 0, 4096, Duration.ofMinutes(1));
    remote(
        "READ with a write-only grant, checks skipped",
        AttackProbe.read(c, AttackProbe.remoteAddress(wo), AttackProbe.rkey(wo), 64));
  }

  private void narrowerRole() {
    if (target.narrow() == null) {
      note("skip", "peer with a narrower role asks to WRITE", "GRANT_DENIED", "no --narrow given");
      return;
    }
    SecureRdmaClient c = connect(target.narrow());
    denied(
        "peer with a narrower role asks to WRITE",
        () -> c.grant(target.region(), EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(10)));
    denied(
        "asks for another tenant's region by name",
        () ->
            c.grant(
                target.victimRegion() + "-x",
                EnumSet.of(Access.READ),
                0,
                4096,
                Duration.ofSeconds(10)));
  }

  private void releasedAndExpiredGrants() throws Exception {
    SecureRdmaClient c = connect(target.attacker());
    RemoteGrant g = writeGrant(c, 0, 4096, Duration.ofMinutes(1));
    g.release().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    failure(
        "write through a released grant",
        ChannelException.Reason.REVOKED,
        () -> g.writeBlocking(0, ByteBuffer.wrap(new byte[8])));
    remote(
        "released grant's rkey, checks skipped",
        AttackProbe.write(c, AttackProbe.remoteAddress(g), AttackProbe.rkey(g), new byte[8], 8, 0));

    SecureRdmaClient d = connect(target.attacker());
    // the host invalidates the rkey before it tells the client, so the notice is the moment the
    // raw write below tests the RNIC's refusal (the client's own clock may run out a little sooner)
    CompletableFuture<String> ended = new CompletableFuture<>();
    d.onRevoked((grant, reason) -> ended.complete(reason));
    RemoteGrant e = writeGrant(d, 0, 4096, Duration.ofSeconds(1));
    await(() -> !e.isValid(), "expiry");
    failure(
        "write through an expired grant",
        ChannelException.Reason.EXPIRED,
        () -> e.writeBlocking(0, ByteBuffer.wrap(new byte[8])));
    String what = "expired grant's rkey, checks skipped";
    String notice = awaitNotice(ended);
    if (!"EXPIRED".equals(notice)) {
      row(what, "REM_ACCESS_ERR", "no EXPIRED notice from the host: " + notice, false);
      return;
    }
    remote(
        what,
        AttackProbe.write(d, AttackProbe.remoteAddress(e), AttackProbe.rkey(e), new byte[8], 8, 0));
  }

  /** The reason of the host's REVOKE notice, or what happened instead within {@link #WAIT}. */
  private static String awaitNotice(CompletableFuture<String> notice) throws InterruptedException {
    try {
      return notice.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return "none within " + WAIT;
    } catch (ExecutionException e) {
      return e.getCause().toString();
    }
  }

  private void records() throws Exception {
    SecureRdmaClient c = connect(target.attacker());
    RemoteGrant g = writeGrant(c, 0, 65536, Duration.ofMinutes(1));
    byte[] moved = AttackProbe.sealRecord(c, g, 4096, new byte[100]);
    byte[] cut = AttackProbe.sealRecord(c, g, 12288, new byte[100]);
    byte[] flipped = AttackProbe.sealRecord(c, g, 16384, new byte[100]);
    flipped[40] ^= 1;
    recordAttack(
        "relocate a record to another offset", "AUTH_FAILED", c, g, 8192, moved, moved.length);
    recordAttack("truncate a record", "TRUNCATED", c, g, 12288, cut, cut.length / 2);
    recordAttack("flip one ciphertext bit", "AUTH_FAILED", c, g, 16384, flipped, flipped.length);
    // a genuine record, delivered once, then the same bytes again
    byte[] genuine = AttackProbe.sealRecord(c, g, 20480, new byte[100]);
    Supplier<HostStats> host = target.hostStats();
    long opened = host == null ? 0 : host.get().recordsOpened();
    String first =
        AttackProbe.write(
            c,
            AttackProbe.remoteAddress(g) + 20480,
            AttackProbe.rkey(g),
            genuine,
            genuine.length,
            AttackProbe.immediate(g, 20480));
    if (!"SUCCESS".equals(first)) {
      row("replay a delivered record", "host rejects: REPLAYED", "first write " + first, false);
      return;
    }
    // the write's completion says the record was placed at the host; where the host can be
    // inspected, wait until it has opened (delivered) it, so the replay follows a delivery
    if (host != null && !awaitQuietly(() -> host.get().recordsOpened() > opened)) {
      row(
          "replay a delivered record",
          "host rejects: REPLAYED",
          "genuine record not delivered within " + WAIT,
          false);
      return;
    }
    recordAttack("replay a delivered record", "REPLAYED", c, g, 20480, genuine, genuine.length);
  }

  private void recordAttack(
      String what,
      String hostVerdict,
      SecureRdmaClient c,
      RemoteGrant g,
      long at,
      byte[] bytes,
      int length)
      throws InterruptedException {
    Supplier<HostStats> host = target.hostStats();
    long before = host == null ? 0 : host.get().recordsRejected();
    String status =
        AttackProbe.write(
            c,
            AttackProbe.remoteAddress(g) + at,
            AttackProbe.rkey(g),
            bytes,
            length,
            AttackProbe.immediate(g, at));
    if (host == null) {
      if ("SUCCESS".equals(status)) {
        note(
            "sent",
            what,
            "host rejects: " + hostVerdict,
            "write SUCCESS; verdict in the host's audit log (access_violation)");
      } else {
        row(what, "host rejects: " + hostVerdict, "write " + status, false);
      }
      return;
    }
    boolean seen = awaitQuietly(() -> host.get().recordsRejected() > before);
    row(
        what,
        "host rejects: " + hostVerdict,
        "write " + status + ", host " + (seen ? "rejected it (audited)" : "ACCEPTED it"),
        seen && "SUCCESS".equals(status));
  }

  private void flood() {
    int opened = 0;
    ChannelException refusal = null;
    List<SecureRdmaClient> flood = new ArrayList<>();
    try {
      for (int i = 0; i < 1024 && refusal == null; i++) {
        try {
          flood.add(SecureRdmaClient.connect(options(target.attacker())));
          opened++;
        } catch (ChannelException e) {
          refusal = e;
        }
      }
    } finally {
      for (SecureRdmaClient c : flood) {
        c.close();
      }
    }
    boolean quota = refusal != null && refusal.reason() == ChannelException.Reason.QUOTA_EXCEEDED;
    String got =
        refusal == null
            ? "none refused"
            : quota ? refusal.reason().name() : refusal.getMessage(); // names its reason first
    row(
        "sessions beyond the tenant's quota",
        "QUOTA_EXCEEDED",
        got + " after " + opened + " more",
        quota);
  }

  private void malformedFrame() {
    String what = "malformed control frame (an HTTP request)";
    try {
      var peer =
          MutualTls.client(target.attacker(), target.trust()).connect(target.address(), WAIT);
      try (var socket = peer.socket()) {
        OutputStream o = socket.getOutputStream();
        o.write("GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        o.flush();
        socket.setSoTimeout((int) WAIT.toMillis());
        InputStream in = socket.getInputStream();
        byte[] head = in.readNBytes(4);
        boolean error = head.length == 4 && head[0] == 0x53 && head[1] == 0x52 && head[3] == 0x3E;
        while (in.read(new byte[1024]) > 0) {
          // the host closes after its ERROR frame
        }
        row(
            what,
            "ERROR frame, connection closed",
            error ? "ERROR frame, closed" : "no ERROR frame",
            error);
      }
    } catch (IOException | KeyExchangeException e) {
      row(what, "ERROR frame, connection closed", "closed without ERROR: " + e.getMessage(), false);
    }
  }

  private void failure(String what, ChannelException.Reason expected, Runnable r) {
    try {
      r.run();
      row(what, expected.name(), "SUCCEEDED", false);
    } catch (ChannelException e) {
      row(what, expected.name(), e.reason().name(), e.reason() == expected);
    }
  }

  private void denied(String what, Runnable r) {
    try {
      r.run();
      row(what, "GRANT_DENIED", "GRANTED", false);
    } catch (ChannelException e) {
      row(
          what,
          "GRANT_DENIED",
          e.reason() + " " + e.detail(),
          e.reason() == ChannelException.Reason.GRANT_DENIED);
    }
  }

  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    if (!awaitQuietly(condition)) {
      throw new IllegalStateException("not within " + WAIT + ": " + what);
    }
  }

  static boolean awaitQuietly(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }
}
