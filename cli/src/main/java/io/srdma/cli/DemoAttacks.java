package io.srdma.cli;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.HostedRegion;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.RevocationList;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyError;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The attacks of issues 14 and 15 that need the host at hand: revoking a live peer's certificate
 * and putting an older CRL back, a WRITE in flight across a grant's revocation, forged and
 * rolled-back owner records, a hostile policy. Rows of {@code srdma demo} only ({@code srdma
 * attack-suite} cannot revoke or inspect a remote host). Not thread-safe: one run at a time.
 */
final class DemoAttacks {
  /** The region offset the owner-record rows use (above what the demo's traffic writes). */
  private static final long OWNER_AREA = 3L << 20;

  /**
   * What the demo attacks with.
   *
   * @param host the demo's host
   * @param ca the demo's CA (it revokes)
   * @param crl the host's revocation list, watching the CA's crl.pem
   * @param acmeKv acme's kvcache region on the host
   * @param credential issues (once) a credential of tenant, peer
   * @param options a client's options for a credential, pinned to the demo host
   * @param audit the host's audit log file
   */
  record Setup(
      RegionHost host,
      DeploymentCa ca,
      RevocationList crl,
      HostedRegion acmeKv,
      BiFunction<String, String, Credential> credential,
      Function<Credential, ClientOptions> options,
      Path audit) {}

  private final AttackSuite suite;
  private final Setup setup;
  private final List<SecureRdmaClient> clients = new ArrayList<>();

  DemoAttacks(AttackSuite suite, Setup setup) {
    this.suite = suite;
    this.setup = setup;
  }

  void run() throws InterruptedException {
    try {
      suite.attempt("revoke a live peer's certificate", this::revokeLivePeer);
      suite.attempt("WRITE in flight across a grant's revocation", this::writeAcrossRevoke);
      suite.attempt("reader whose grant ended, after the rotation", this::endedReader);
      suite.attempt("forged owner record (READ+WRITE peer)", this::forgedOwnerRecord);
      suite.attempt("old owner record put back", this::rolledBackOwnerRecord);
      suite.attempt("hostile policy (1,500 nested '[')", this::hostilePolicy);
    } finally {
      for (SecureRdmaClient c : clients) {
        c.close();
      }
    }
  }

  /** Lines of the host's audit log containing {@code fragment} (-1 when unreadable). */
  private long auditLines(String fragment) {
    try (var lines = Files.lines(setup.audit())) {
      return lines.filter(l -> l.contains(fragment)).count();
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      return -1;
    }
  }

  private SecureRdmaClient connect(Credential who) {
    SecureRdmaClient c = SecureRdmaClient.connect(setup.options().apply(who));
    clients.add(c);
    return c;
  }

  private boolean hostHasSession(SecureRdmaClient c) {
    return setup.host().sessions().stream().anyMatch(s -> s.sessionId().equals(c.sessionId()));
  }

  /** The reconnect of {@code who}: what refused it, or null when it was served. */
  private String reconnect(Credential who) {
    try (SecureRdmaClient c = SecureRdmaClient.connect(setup.options().apply(who))) {
      c.sessionId();
      return null;
    } catch (ChannelException e) {
      return e.reason() + " " + e.detail();
    }
  }

  private void revokeLivePeer() throws Exception {
    Credential cred = setup.credential().apply("acme", "trainer-revoked");
    SecureRdmaClient c = connect(cred);
    c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    Path crlFile = setup.ca().directory().resolve(DeploymentCa.CRL);
    byte[] olderCrl = Files.readAllBytes(crlFile);
    long revokedLines = auditLines("certificate-revoked");

    long t0 = System.nanoTime();
    setup.ca().revoke(cred.certificate());
    boolean ended = AttackSuite.awaitQuietly(() -> !hostHasSession(c));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    suite.row(
        "revoke a live peer's certificate (CRL)",
        "session ended within 1 s",
        ended ? "ended after " + ms + " ms, its grants revoked" : "SESSION STILL LIVE",
        ended && ms <= 1000);

    // the live session's end is one certificate-revoked line (and its grants' revocation another)
    AttackSuite.awaitQuietly(() -> auditLines("certificate-revoked") > revokedLines);
    // a refused handshake is audited with the key-exchange reason
    long beforeReconnect = auditLines("CERTIFICATE_REVOKED");
    String refused = reconnect(cred);
    boolean audited =
        AttackSuite.awaitQuietly(() -> auditLines("CERTIFICATE_REVOKED") > beforeReconnect);
    suite.row(
        "revoked peer reconnects",
        "refused: CERTIFICATE_REVOKED",
        refused == null
            ? "SERVED"
            : refused
                + (audited
                    ? ", host audited CERTIFICATE_REVOKED"
                    : ", NO CERTIFICATE_REVOKED audit line"),
        refused != null && audited);

    // the attacker puts the CRL from before the revocation back in place
    BigInteger inForce = setup.crl().number();
    Path newer = crlFile.resolveSibling("crl.pem.demo-newer");
    Files.copy(crlFile, newer, StandardCopyOption.REPLACE_EXISTING);
    String what = "older CRL put back in place";
    try {
      Files.write(crlFile, olderCrl);
      Files.setLastModifiedTime(crlFile, FileTime.from(Instant.now().plusSeconds(60)));
      String reload;
      try {
        setup.crl().reload();
        reload = "ACCEPTED";
      } catch (KeyExchangeException e) {
        reload = e.reason().name();
      }
      String again = reconnect(cred);
      boolean stays = setup.crl().number().equals(inForce);
      suite.row(
          what,
          "CRL_ROLLBACK, peer stays revoked",
          reload
              + ", CRL number "
              + (stays ? "stays " + inForce : "went BACK to " + setup.crl().number())
              + ", reconnect "
              + (again == null ? "SERVED" : "refused"),
          "CRL_ROLLBACK".equals(reload) && stays && again != null);
    } finally {
      // the CA's own list back in place, newer than anything the host saw
      Files.move(newer, crlFile, StandardCopyOption.REPLACE_EXISTING);
      Files.setLastModifiedTime(crlFile, FileTime.from(Instant.now().plusSeconds(120)));
    }
  }

  /**
   * A large raw WRITE races the grant's revocation: whatever the write's outcome, no byte of the
   * region may change after {@code revoke} returned.
   */
  private void writeAcrossRevoke() throws Exception {
    String what = "WRITE in flight across a grant's revocation";
    String expected = "no byte lands after revoke returns";
    SecureRdmaClient c = connect(setup.credential().apply("acme", "trainer-2"));
    String observed = "";
    boolean ok = true;
    // the race may go either way; up to three rounds to catch the write in flight
    for (int round = 0; round < 3 && ok && !observed.startsWith("write REM_ACCESS_ERR"); round++) {
      byte fill = (byte) (0x5A + round);
      Inflight r = inflight(c, fill);
      observed =
          "write "
              + r.status()
              + ", "
              + r.changed()
              + " of "
              + r.length()
              + " bytes changed before the revoke returned, "
              + (r.unchanged() ? "none after" : "BYTES CHANGED AFTER");
      // SUCCESS is right only when the whole write had landed before the revoke returned
      boolean completedBefore = "SUCCESS".equals(r.status()) && r.whole();
      ok = r.revoked() && r.unchanged() && ("REM_ACCESS_ERR".equals(r.status()) || completedBefore);
    }
    suite.row(what, expected, observed, ok);
  }

  private record Inflight(
      boolean revoked, String status, int changed, boolean whole, int length, boolean unchanged) {}

  /** One round: a 2 MiB raw WRITE of {@code fill} bytes, the grant revoked as it starts. */
  private Inflight inflight(SecureRdmaClient c, byte fill) throws Exception {
    int length = 2 << 20;
    RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, length, Duration.ofMinutes(1));
    byte[] junk = new byte[length];
    Arrays.fill(junk, fill);
    byte[] before = new byte[length];
    setup.acmeKv().copy(0, before);
    CompletableFuture<String> write = new CompletableFuture<>();
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    Thread writer =
        new Thread(
            () -> {
              try {
                started.countDown();
                write.complete(
                    AttackProbe.writeSilently(
                        c, AttackProbe.remoteAddress(g), AttackProbe.rkey(g), junk, length));
              } catch (RuntimeException e) {
                write.complete(e.toString());
              }
            },
            "srdma-demo-inflight-write");
    writer.setDaemon(true);
    writer.start();
    started.await(AttackSuite.WAIT.toMillis(), TimeUnit.MILLISECONDS);
    boolean revoked = setup.host().revoke(g.id(), "demo");
    byte[] atRevoke = new byte[length];
    setup.acmeKv().copy(0, atRevoke);
    String status = write.get(AttackSuite.WAIT.toSeconds(), TimeUnit.SECONDS);
    writer.join(AttackSuite.WAIT.toMillis());
    // a straggler would land shortly after the completion: give it the time to
    Thread.sleep(100);
    byte[] after = new byte[length];
    setup.acmeKv().copy(0, after);
    int changed = 0;
    boolean whole = true;
    for (int i = 0; i < length; i++) {
      if (atRevoke[i] != before[i]) {
        changed++;
      }
      whole &= atRevoke[i] == fill;
    }
    return new Inflight(revoked, status, changed, whole, length, Arrays.equals(atRevoke, after));
  }

  private static ByteBuffer text(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String string(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return new String(a, StandardCharsets.UTF_8);
  }

  /** The attacker's client and READ+WRITE grant, and a reader's READ grant, over one area. */
  private record OwnerArea(SecureRdmaClient attacker, RemoteGrant rw, RemoteGrant reader) {}

  private OwnerArea ownerArea() {
    SecureRdmaClient attacker = connect(setup.credential().apply("acme", "trainer-2"));
    SecureRdmaClient victim = connect(setup.credential().apply("acme", "dashboard"));
    RemoteGrant rw =
        attacker.grant(
            "kvcache",
            EnumSet.of(Access.READ, Access.WRITE),
            OWNER_AREA,
            65536,
            Duration.ofMinutes(1));
    RemoteGrant reader =
        victim.grant("kvcache", EnumSet.of(Access.READ), OWNER_AREA, 65536, Duration.ofSeconds(30));
    return new OwnerArea(attacker, rw, reader);
  }

  /** What the reader's READ of a record says: the plaintext, or the refusal. */
  private static String readerSees(RemoteGrant reader, long at, int length) {
    try {
      return "read \"" + string(reader.readBlocking(at, length)) + "\"";
    } catch (ChannelException e) {
      return e.reason() + " " + e.getMessage();
    }
  }

  /** The attacker writes {@code bytes} at {@code at} of its grant, then the reader reads there. */
  private void ownerRow(
      String what, String verdict, OwnerArea a, long at, byte[] bytes, String expectedBefore) {
    String status =
        AttackProbe.writeSilently(
            a.attacker(),
            AttackProbe.remoteAddress(a.rw()) + at,
            AttackProbe.rkey(a.rw()),
            bytes,
            bytes.length);
    if (!"SUCCESS".equals(status)) {
      suite.row(what, "reader refuses: " + verdict, "write " + status, false);
      return;
    }
    String seen = readerSees(a.reader(), at, bytes.length);
    boolean refused =
        seen.startsWith(ChannelException.Reason.RECORD_REJECTED.name()) && seen.contains(verdict);
    suite.row(
        what,
        "reader refuses: " + verdict,
        (refused ? "reader refused: " + verdict : "reader " + seen) + " (" + expectedBefore + ")",
        refused);
  }

  /**
   * A reader copies the region key its grant carried, the grant ends (released), the key rotates: a
   * record sealed afterwards does not open with the copy.
   */
  private void endedReader() throws Exception {
    String what = "reader whose grant ended, after the rotation";
    String expected = "kept key opens nothing sealed after";
    HostedRegion kv = setup.acmeKv();
    SecureRdmaClient leaver = connect(setup.credential().apply("acme", "dashboard"));
    RemoteGrant gone =
        leaver.grant("kvcache", EnumSet.of(Access.READ), OWNER_AREA, 65536, Duration.ofSeconds(30));
    long early = OWNER_AREA + 24576;
    long late = OWNER_AREA + 32768;
    try (AttackProbe.KeptRegionKey kept = AttackProbe.keepRegionKey(gone, kv.tenant())) {
      int n = (int) kv.seal(early, text("sealed while the leaver could read"));
      byte[] raw = new byte[n];
      kv.copy(early, raw);
      String before = kept.open(raw, early);
      if (!"OK".equals(before)) {
        suite.row(what, expected, "the kept key did not open a current record: " + before, false);
        return;
      }
      int generation = kv.keyGeneration();
      gone.release().toCompletableFuture().get(AttackSuite.WAIT.toSeconds(), TimeUnit.SECONDS);
      if (!AttackSuite.awaitQuietly(() -> kv.keyGeneration() > generation)) {
        suite.row(what, expected, "NO ROTATION after the READ grant ended", false);
        return;
      }
      int m = (int) kv.seal(late, text("sealed after the leaver's grant ended"));
      byte[] after = new byte[m];
      kv.copy(late, after);
      String verdict = kept.open(after, late);
      suite.row(
          what,
          expected,
          "key generation "
              + generation
              + " -> "
              + kv.keyGeneration()
              + ", kept key on a new record: "
              + verdict,
          !"OK".equals(verdict));
    }
  }

  private void forgedOwnerRecord() {
    String what = "forged owner record (READ+WRITE peer)";
    OwnerArea a = ownerArea();
    long n = setup.acmeKv().seal(OWNER_AREA + 4096, text("price=100"));
    String genuine = readerSees(a.reader(), 4096, (int) n);
    if (!genuine.equals("read \"price=100\"")) {
      suite.row(what, "reader refuses: BAD_SIGNATURE", "genuine record: " + genuine, false);
      return;
    }
    // sealed with the region key the attacker's READ grant carries, signed with its own key
    byte[] forged =
        AttackProbe.forgeOwnerRecord(
            a.rw(), setup.acmeKv().tenant(), 8192, "price=001".getBytes(StandardCharsets.UTF_8));
    ownerRow(what, "BAD_SIGNATURE", a, 8192, forged, "the host's own record opens");
  }

  private void rolledBackOwnerRecord() {
    String what = "old owner record put back";
    OwnerArea a = ownerArea();
    long at = 16384;
    long n = setup.acmeKv().seal(OWNER_AREA + at, text("balance=100"));
    String v1 = readerSees(a.reader(), at, (int) n);
    // the attacker keeps the old record's bytes (what its own READ of the range returns)
    byte[] old = new byte[(int) n];
    setup.acmeKv().copy(OWNER_AREA + at, old);
    setup.acmeKv().seal(OWNER_AREA + at, text("balance=000"));
    String v2 = readerSees(a.reader(), at, (int) n);
    if (!v1.equals("read \"balance=100\"") || !v2.equals("read \"balance=000\"")) {
      suite.row(what, "reader refuses: ROLLED_BACK", "versions: " + v1 + ", " + v2, false);
      return;
    }
    ownerRow(what, "ROLLED_BACK", a, at, old, "the reader had read version 2");
  }

  /**
   * A policy 3 KB long nesting 1,500 flow sequences: refused with its position, nothing applied,
   * the host still grants under the policy in force.
   */
  private void hostilePolicy() {
    String what = "hostile policy (1,500 nested '[')";
    String expected = "refused at file:line:column, host serves on";
    String hostile = "version: 1\ntenants:\n  acme: " + "[".repeat(1500) + "]".repeat(1500) + "\n";
    Policy inForce = setup.host().policy();
    String refusal;
    boolean refused;
    try {
      Policy p = new PolicyLoader().parse("hostile-policy.yaml", hostile);
      setup.host().reloadPolicy(p, "demo");
      refusal = "ACCEPTED and applied";
      refused = false;
    } catch (PolicyRejectedException e) {
      PolicyError first = e.errors().get(0);
      refusal = first.toString();
      refused = e.limitExceeded() && refusal.matches("hostile-policy\\.yaml:\\d+:\\d+: .*");
    }
    String serves;
    boolean ok;
    try {
      SecureRdmaClient c = connect(setup.credential().apply("acme", "trainer-2"));
      c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(10));
      serves = "host still grants";
      ok = setup.host().policy() == inForce;
    } catch (ChannelException e) {
      serves = "host REFUSED a grant: " + e.reason();
      ok = false;
    }
    suite.row(what, expected, refusal + "; " + serves, refused && ok);
  }
}
