package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attacks of DESIGN.md §7 that exist at the channel layer, each on the soft provider. For each:
 * the typed error, the audit line, the other tenant's region untouched, the host still serving.
 */
class ChannelThreatTest {
  @TempDir Path dir;
  ChannelRig rig;
  SecureRdmaClient globex;
  RemoteGrant globexGrant;
  long globexChecksum;
  boolean addressBlocked;

  @BeforeEach
  void start() throws Exception {
    rig = new ChannelRig(dir);
    globex = rig.client("globex", "loader-1");
    globexGrant =
        globex.grant(
            "features", EnumSet.of(Access.READ, Access.WRITE), 0, 65536, Duration.ofMinutes(1));
    globexGrant.writeBlocking(0, ChannelRig.bytes(5000, 42));
    ChannelRig.await(() -> rig.host.stats().recordsOpened() == 1, "globex record");
    globexChecksum = ChannelRig.checksum(rig.globexFeatures);
  }

  @AfterEach
  void stop() throws Exception {
    try {
      assertEquals(globexChecksum, ChannelRig.checksum(rig.globexFeatures), "globex untouched");

      assertTrue(globex.isOpen(), "globex's session undisturbed");
      if (addressBlocked) {
        // 127.0.0.1 is refused for the rest of the minute (that is the point); the host still
        // serves the sessions it has.
        globexGrant.writeBlocking(1024, ChannelRig.bytes(10, 5));
      } else {
        stillServing();
      }
    } finally {
      rig.close();
    }
  }

  /** A fresh acme session can still write and be opened. */
  private void stillServing() throws Exception {
    long before = rig.host.stats().recordsOpened();
    SecureRdmaClient c = rig.client("acme", "trainer-9");
    RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(30));
    g.writeBlocking(0, ChannelRig.bytes(100, 1));
    ChannelRig.await(() -> rig.host.stats().recordsOpened() == before + 1, "host still serving");
  }

  private void auditHas(String... fragments) throws Exception {
    ChannelRig.await(
        () -> {
          try {
            String a = rig.audit();
            for (String f : fragments) {
              if (!a.contains(f)) {
                return false;
              }
            }
            return true;
          } catch (Exception e) {
            return false;
          }
        },
        "audit lines " + String.join(", ", fragments));
  }

  private static byte[] payload(int n) {
    byte[] b = new byte[n];
    new SecureRandom().nextBytes(b);
    return b;
  }

  /** Posts a raw WRITE_WITH_IMM on the client's queue pair, skipping the writer's checks. */
  private static WcStatus rawWrite(
      SecureRdmaClient c, long remoteAddress, int rkey, byte[] bytes, int length, int imm) {
    return AttackProbe.post(
        c, WrOpcode.RDMA_WRITE_WITH_IMM, remoteAddress, rkey, bytes, length, imm);
  }

  /** A 64 KiB write grant whose first 200-byte record (at offset 0) the host has opened. */
  private RemoteGrant grantWithFirstRecord(SecureRdmaClient c) throws Exception {
    RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
    g.writeBlocking(0, ByteBuffer.wrap(payload(200)));
    ChannelRig.await(() -> rig.acmeRecords.size() == 1, "first record");
    return g;
  }

  /** A raw write of {@code length} random bytes that the target's RNIC must refuse. */
  private static void assertWriteRefused(
      SecureRdmaClient c, long remoteAddress, int rkey, int length, int imm, String why) {
    assertEquals(
        WcStatus.REM_ACCESS_ERR,
        rawWrite(c, remoteAddress, rkey, payload(length), length, imm),
        why);
  }

  @Test
  void crossTenantRkeyIsRefusedByThePdCheck() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    assertWriteRefused(
        acme,
        AttackProbe.remoteAddress(globexGrant),
        AttackProbe.rkey(globexGrant),
        64,
        AttackProbe.slot(globexGrant) << 24,
        "another tenant's rkey refused by the PD check");
    ChannelRig.await(() -> !acme.isOpen(), "acme session ended");
    assertEquals(1, rig.host.stats().remoteAccessErrors());
    auditHas("queue pair entered ERROR");
  }

  @Test
  void guessedRkeyIsRefused() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant own =
        acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    int guess = AttackProbe.rkey(own) ^ (1 + new SecureRandom().nextInt(Integer.MAX_VALUE));
    assertWriteRefused(
        acme,
        AttackProbe.remoteAddress(own),
        guess,
        8,
        AttackProbe.slot(own) << 24,
        "guessed rkey");
    ChannelRig.await(() -> !acme.isOpen(), "session ended");
    ChannelException e =
        assertThrows(
            ChannelException.class, () -> own.writeBlocking(0, ByteBuffer.wrap(payload(8))));
    assertTrue(
        e.reason() == ChannelException.Reason.SESSION_CLOSED
            || e.reason() == ChannelException.Reason.REVOKED
            || e.reason() == ChannelException.Reason.REMOTE_ACCESS_ERROR,
        e.toString());
    auditHas("queue pair entered ERROR");
  }

  @Test
  void revokedGrantFailsAtTheWriterAndAtTheTarget() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant g = acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    AtomicReference<String> told = new AtomicReference<>();
    acme.onRevoked((grant, why) -> told.set(why));
    assertTrue(rig.host.revoke(g.id(), "operator"));
    ChannelRig.await(() -> "REVOKED".equals(told.get()), "client told of revocation");
    ChannelException e =
        assertThrows(ChannelException.class, () -> g.writeBlocking(0, ByteBuffer.wrap(payload(8))));
    assertEquals(ChannelException.Reason.REVOKED, e.reason());
    assertWriteRefused(
        acme,
        AttackProbe.remoteAddress(g),
        AttackProbe.rkey(g),
        8,
        AttackProbe.slot(g) << 24,
        "the RNIC refuses the revoked rkey");
    auditHas("\"revoke\"", "operator");
    assertFalse(rig.host.revoke(g.id(), "operator"), "revoking twice reports nothing live");
  }

  @Test
  void expiredGrantFails() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant g =
        acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMillis(300));
    ChannelRig.await(() -> "EXPIRED".equals(g.endedBecause()), "expiry pushed to the client");
    ChannelException e =
        assertThrows(ChannelException.class, () -> g.writeBlocking(0, ByteBuffer.wrap(payload(8))));
    assertEquals(ChannelException.Reason.EXPIRED, e.reason());
    assertWriteRefused(
        acme,
        AttackProbe.remoteAddress(g),
        AttackProbe.rkey(g),
        8,
        AttackProbe.slot(g) << 24,
        "the RNIC refuses the expired rkey");
    auditHas("expired");
  }

  @Test
  void outOfBoundsAndOverflowingRangesAreRefusedTwice() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant g =
        acme.grant("kvcache", EnumSet.of(Access.WRITE), 8192, 4096, Duration.ofMinutes(1));
    long before = ChannelRig.checksum(rig.acmeKv);
    assertEquals(
        ChannelException.Reason.OUT_OF_BOUNDS,
        assertThrows(
                ChannelException.class,
                () -> g.writeBlocking(4096 - 40, ByteBuffer.wrap(payload(8))))
            .reason());
    assertEquals(
        ChannelException.Reason.OUT_OF_BOUNDS,
        assertThrows(
                ChannelException.class,
                () -> g.writeBlocking(Long.MAX_VALUE - 4, ByteBuffer.wrap(payload(8))))
            .reason());
    assertEquals(
        ChannelException.Reason.OUT_OF_BOUNDS,
        assertThrows(ChannelException.class, () -> g.writeBlocking(-1, ByteBuffer.wrap(payload(8))))
            .reason());
    ChannelException denied = refusedWriteGrant(acme, Long.MAX_VALUE - 10);
    assertEquals(ChannelException.Reason.INVALID_ARGUMENT, denied.reason());
    ChannelException past = refusedWriteGrant(acme, ChannelRig.REGION_SIZE - 10);
    assertEquals(ChannelException.Reason.GRANT_DENIED, past.reason());
    assertEquals("OUT_OF_BOUNDS", past.detail());
    assertEquals(before, ChannelRig.checksum(rig.acmeKv), "nothing written by refused writes");
    assertWriteRefused(
        acme,
        AttackProbe.remoteAddress(g) + 4096,
        AttackProbe.rkey(g),
        1,
        AttackProbe.slot(g) << 24,
        "1 byte past the grant refused by the target");
    byte[] around = new byte[16];
    rig.acmeKv.copy(8192 + 4096, around);
    assertEquals(
        ByteBuffer.wrap(new byte[16]), ByteBuffer.wrap(around), "nothing written past the grant");
    auditHas("OUT_OF_BOUNDS");
  }

  @Test
  void readWithAWriteOnlyGrantIsRefused() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant g = acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    ChannelException e = assertThrows(ChannelException.class, () -> g.readBlocking(0, 100));
    assertEquals(ChannelException.Reason.NOT_PERMITTED, e.reason());
    WcStatus s =
        AttackProbe.post(
            acme,
            WrOpcode.RDMA_READ,
            AttackProbe.remoteAddress(g),
            AttackProbe.rkey(g),
            null,
            64,
            0);
    assertEquals(WcStatus.REM_ACCESS_ERR, s);
    auditHas("queue pair entered ERROR");
  }

  @Test
  void replayedRelocatedTruncatedAndTamperedRecordsAreRejected() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant g = grantWithFirstRecord(acme);
    byte[] record = new byte[200 + SealedLayout.RECORD_OVERHEAD];
    rig.acmeKv.copy(0, record);
    int slot = AttackProbe.slot(g) << 24;
    long rejected = rig.host.stats().recordsRejected();

    assertEquals(
        WcStatus.SUCCESS,
        rawWrite(
            acme, AttackProbe.remoteAddress(g), AttackProbe.rkey(g), record, record.length, slot));
    ChannelRig.await(() -> rig.host.stats().recordsRejected() == rejected + 1, "replay rejected");
    auditHas("record REPLAYED");

    byte[] relocated = AttackProbe.sealRecord(acme, g, 4096, payload(200));
    assertEquals(
        WcStatus.SUCCESS,
        rawWrite(
            acme,
            AttackProbe.remoteAddress(g) + 20480,
            AttackProbe.rkey(g),
            relocated,
            relocated.length,
            slot | 20480));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 2, "relocation rejected");
    auditHas("record AUTH_FAILED");

    byte[] truncated = AttackProbe.sealRecord(acme, g, 8192, payload(200));
    assertEquals(
        WcStatus.SUCCESS,
        rawWrite(
            acme,
            AttackProbe.remoteAddress(g) + 8192,
            AttackProbe.rkey(g),
            truncated,
            truncated.length / 2,
            slot | 8192));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 3, "truncation rejected");
    auditHas("record TRUNCATED");

    byte[] tampered = AttackProbe.sealRecord(acme, g, 24576, payload(200));
    tampered[30] ^= 1;
    assertEquals(
        WcStatus.SUCCESS,
        rawWrite(
            acme,
            AttackProbe.remoteAddress(g) + 24576,
            AttackProbe.rkey(g),
            tampered,
            tampered.length,
            slot | 24576));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 4, "tampering rejected");
    assertEquals(1, rig.acmeRecords.size(), "no forged record delivered");
    g.writeBlocking(28672, ByteBuffer.wrap(payload(200)));
    ChannelRig.await(
        () -> rig.acmeRecords.size() == 2, "a valid record after the attacks still opens");
    assertTrue(acme.isOpen(), "rejected records do not end the session");
  }

  /**
   * InfiniBand C9-88: a zero-length WRITE_WITH_IMM carries no R_Key the target checks, so any peer
   * can notify the host with one. The host opens only the bytes the completion says arrived (none),
   * so it cannot be made to reopen an old record: the notification is rejected and audited.
   */
  @Test
  void zeroLengthWriteWithImmediateOpensNothing() throws Exception {
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant g = grantWithFirstRecord(acme);
    long rejected = rig.host.stats().recordsRejected();
    assertEquals(
        WcStatus.SUCCESS,
        rawWrite(acme, 0, 0, null, 0, AttackProbe.slot(g) << 24),
        "no R_Key is checked for a zero-length write (C9-88)");
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 1, "empty notification rejected");
    auditHas("record TRUNCATED");
    assertEquals(1, rig.acmeRecords.size(), "the record already there is not delivered again");
    g.writeBlocking(4096, ByteBuffer.wrap(payload(200)));
    ChannelRig.await(() -> rig.acmeRecords.size() == 2, "the session still delivers");
  }

  @Test
  void aPeerWithANarrowerRoleIsDenied() throws Exception {
    SecureRdmaClient dashboard = rig.client("acme", "dashboard");
    ChannelException e =
        assertThrows(
            ChannelException.class,
            () ->
                dashboard.grant(
                    "kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(10)));
    assertEquals(ChannelException.Reason.GRANT_DENIED, e.reason());
    assertTrue(
        e.detail().equals("NOT_PERMITTED") || e.detail().equals("OPERATION_NOT_ALLOWED"),
        e.detail());
    ChannelException other =
        assertThrows(
            ChannelException.class,
            () ->
                dashboard.grant(
                    "features", EnumSet.of(Access.READ), 0, 4096, Duration.ofSeconds(10)));
    assertEquals(
        ChannelException.Reason.GRANT_DENIED,
        other.reason(),
        "another tenant's region name is unknown in acme");
    assertEquals(2, rig.host.stats().denials());
    auditHas("\"decide\"");
    assertTrue(dashboard.isOpen(), "a denial is an answer; the session goes on");
  }

  @Test
  void malformedAndOversizedFramesEndOnlyThatSession() throws Exception {
    for (byte[] junk :
        new byte[][] {
          "GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
          {0x53, 0x52, 1, 0x10, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x10, 0, 0}
        }) {
      MutualTls tls = MutualTls.client(rig.credential("acme", "trainer-7"), rig.ca.trust());
      AuthenticatedPeer p =
          tls.connect(rig.host.address(), ChannelRig.scaled(Duration.ofSeconds(5)));
      try (var s = p.socket()) {
        OutputStream out = s.getOutputStream();
        out.write(junk);
        out.flush();
        s.setSoTimeout((int) ChannelRig.scaled(Duration.ofSeconds(5)).toMillis());
        InputStream in = s.getInputStream();
        byte[] buf = new byte[4096];
        int total = 0;
        for (int n; (n = in.read(buf)) > 0; ) {
          total += n;
        }
        assertTrue(total >= 16, "an ERROR frame came back before the close");
      }
    }
    ChannelRig.await(() -> rig.host.stats().protocolErrors() == 2, "two protocol errors");
    auditHas("protocol violation: BAD_MAGIC", "protocol violation: FRAME_TOO_LARGE");
  }

  @Test
  void connectionsBeyondTheQuotaAndFailedAuthenticationsAreRefused() throws Exception {
    rig.close();
    rig =
        new ChannelRig(
            dir.resolve("quota"), o -> o.maxSessionsPerTenant(2).authFailuresPerMinute(3));
    globex = rig.client("globex", "loader-1");
    globexGrant =
        globex.grant("features", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    globexChecksum = ChannelRig.checksum(rig.globexFeatures);
    SecureRdmaClient first = rig.client("acme", "trainer-1");
    rig.client("acme", "trainer-2");
    ChannelException e =
        assertThrows(ChannelException.class, () -> rig.client("acme", "trainer-3"));
    assertEquals(ChannelException.Reason.QUOTA_EXCEEDED, e.reason());
    auditHas("session quota exceeded");

    // A peer of another deployment: its certificate is not from this CA (and it trusts its own).
    DeploymentCa foreign = DeploymentCa.init(dir.resolve("foreign"), null);
    MutualTls impostor =
        MutualTls.client(
            foreign.issuePeer(PeerIdentity.of("acme", "mallory"), Duration.ofDays(1)),
            foreign.trust());
    for (int i = 0; i < 3; i++) {
      assertThrows(
          io.srdma.keys.KeyExchangeException.class,
          () -> impostor.connect(rig.host.address(), ChannelRig.scaled(Duration.ofSeconds(5))));
    }
    ChannelRig.await(() -> rig.host.stats().authFailures() == 3, "three failures counted");
    assertThrows(
        io.srdma.keys.KeyExchangeException.class,
        () -> impostor.connect(rig.host.address(), ChannelRig.scaled(Duration.ofSeconds(5))));
    addressBlocked = true;
    ChannelRig.await(
        () -> rig.host.stats().rateLimited() >= 1, "fourth refused before the handshake");
    auditHas("\"authenticate\"");
    first.close();
    ChannelRig.await(
        () -> rig.host.stats().sessions() == 2, "a slot of acme's quota is free again");
  }

  /** A 100-byte write grant on acme's kvcache at {@code offset} that must be refused. */
  private static ChannelException refusedWriteGrant(SecureRdmaClient client, long offset) {
    return assertThrows(
        ChannelException.class,
        () ->
            client.grant("kvcache", EnumSet.of(Access.WRITE), offset, 100, Duration.ofMinutes(1)));
  }
}
