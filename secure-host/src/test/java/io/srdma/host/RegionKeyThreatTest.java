package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.OwnerOpener;
import io.srdma.channel.record.OwnerSealer;
import io.srdma.channel.record.OwnerSigning;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.RegionKeyring;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DirectionKeys;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on the region key and on owner records (issue 14, item 4), each as the attacker would run
 * it on the soft provider: a reader whose grant ended, a peer that holds READ and WRITE on the
 * region, a peer that puts an old owner record back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegionKeyThreatTest {
  private static final int MAX = SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD;
  @TempDir Path dir;

  private static ByteBuffer text(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String string(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return new String(a, StandardCharsets.UTF_8);
  }

  /** Waits until {@code value} is above {@code than}. */
  private static void awaitAbove(IntSupplier value, int than, String what) throws Exception {
    ChannelRig.await(() -> value.getAsInt() > than, what);
  }

  /** What a reader holds once its grant carried it: its own copy of the region key material. */
  private static OwnerOpener stolenOpener(HostedRegion region, int anyGeneration) {
    RegionKeyring stolen = new RegionKeyring(region.regionKeyMaterial());
    int generation = stolen.generation();
    DirectionKeys key = stolen.keys(generation);
    // anyGeneration: the thief tries its key whatever generation the record names
    return new OwnerOpener(
        g -> anyGeneration >= 0 || g == generation ? key : null,
        stolen.owner(),
        region.tenant(),
        region.name(),
        MAX,
        false);
  }

  private static OpenResult openRaw(OwnerOpener o, HostedRegion region, long at, int length) {
    byte[] raw = new byte[length];
    region.copy(at, raw);
    return o.open(ByteBuffer.wrap(raw), 0, length, at, ByteBuffer.allocate(MAX));
  }

  @Test
  void aReaderWhoseGrantEndedCannotOpenRecordsSealedAfterTheRotation() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      HostedRegion kv = rig.acmeKv;
      SecureRdmaClient leaver = rig.client("acme", "dashboard");
      SecureRdmaClient stayer = rig.client("acme", "trainer-1");
      RemoteGrant gone =
          leaver.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(20));
      RemoteGrant stays =
          stayer.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(20));
      int before = kv.keyGeneration();
      assertEquals(
          before, AttackProbe.regionKeyGeneration(gone), "the GRANT carried the current key");
      // the leaver keeps what its GRANT carried (here: the same material, copied from the host)
      OwnerOpener thief = stolenOpener(kv, -1);
      OwnerOpener bruteThief = stolenOpener(kv, 0);
      long sealedEarly = kv.seal(0, text("sealed while the leaver was a reader"));
      assertEquals(OpenResult.OK, openRaw(thief, kv, 0, (int) sealedEarly), "the stolen key works");

      gone.release().toCompletableFuture().get(10, TimeUnit.SECONDS);
      awaitAbove(kv::keyGeneration, before, "rotation after the READ grant's release");
      long at = 8192;
      long sealedLate = kv.seal(at, text("sealed after the leaver's grant ended"));

      assertEquals(OpenResult.UNKNOWN_EPOCH, openRaw(thief, kv, at, (int) sealedLate));
      assertEquals(
          OpenResult.AUTH_FAILED,
          openRaw(bruteThief, kv, at, (int) sealedLate),
          "the old key does not open the new generation whatever the label says");
      assertEquals(
          OpenResult.UNKNOWN_EPOCH,
          openRaw(thief, kv, 0, (int) sealedEarly),
          "the early record was re-sealed under the new key too");

      awaitAbove(
          () -> AttackProbe.regionKeyGeneration(stays),
          before,
          "the remaining reader got the new key");
      assertEquals(
          "sealed after the leaver's grant ended",
          string(stays.readBlocking(at, (int) sealedLate)));
      assertEquals(
          "sealed while the leaver was a reader", string(stays.readBlocking(0, (int) sealedEarly)));
      assertTrue(
          AttackProbe.regionKeys(gone).isClosed(), "the leaver's own keys were wiped at release");
    }
  }

  @Test
  void everyWayAReadGrantEndsRotatesTheKey() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      HostedRegion kv = rig.acmeKv;
      SecureRdmaClient c = rig.client("acme", "dashboard");

      int g0 = kv.keyGeneration();
      RemoteGrant released =
          c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofSeconds(20));
      released.release().toCompletableFuture().get(10, TimeUnit.SECONDS);
      awaitAbove(kv::keyGeneration, g0, "rotation on release");

      int g1 = kv.keyGeneration();
      RemoteGrant revoked =
          c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofSeconds(20));
      assertTrue(rig.host.revoke(revoked.id(), "test-operator"));
      awaitAbove(kv::keyGeneration, g1, "rotation on revoke");

      int g2 = kv.keyGeneration();
      var unusedExpiring =
          c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofMillis(300));
      awaitAbove(kv::keyGeneration, g2, "rotation on expiry");

      int g3 = kv.keyGeneration();
      SecureRdmaClient other = rig.client("acme", "checkpointer");
      var unusedLost =
          other.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofSeconds(20));
      other.close();
      awaitAbove(kv::keyGeneration, g3, "rotation when the holder's session ends");
    }
  }

  @Test
  void aPeerHoldingReadAndWriteCannotMakeAnotherReaderAcceptAForgedOwnerRecord() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      HostedRegion kv = rig.acmeKv;
      SecureRdmaClient attacker = rig.client("acme", "trainer-1");
      SecureRdmaClient victim = rig.client("acme", "dashboard");
      RemoteGrant rw =
          attacker.grant(
              "kvcache", EnumSet.of(Access.READ, Access.WRITE), 0, 65536, Duration.ofSeconds(30));
      RemoteGrant reader =
          victim.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(30));
      long genuine = kv.seal(0, text("price=100"));
      assertEquals("price=100", string(reader.readBlocking(0, (int) genuine)));

      // The attacker holds the region key (its grant has READ) and may write the range.
      int generation = AttackProbe.regionKeyGeneration(rw);
      DirectionKeys regionKey = AttackProbe.regionKeys(rw).keys(generation);
      assertNotNull(regionKey);
      byte[] payload = "price=001".getBytes(StandardCharsets.UTF_8);
      long at = 4096;
      int length = payload.length + OwnerSealer.OVERHEAD;

      // 1: owner-bound record sealed with the region key, signed by the attacker's own key
      KeyPair mine = OwnerSigning.generate(new SecureRandom());
      ByteBuffer signedByMe = ByteBuffer.allocate(length);
      new OwnerSealer(regionKey, mine.getPrivate(), "acme", "kvcache", MAX)
          .seal(ByteBuffer.wrap(payload), Long.MAX_VALUE, false, at, signedByMe, 0);
      // 2: the pre-signature forgery: a plain record with the owner binding, no valid signature
      ByteBuffer unsigned = ByteBuffer.allocate(length);
      new RecordSealer(regionKey, MAX)
          .seal(
              ByteBuffer.wrap(payload),
              RecordBinding.owner("acme", "kvcache", generation, 1),
              at,
              unsigned,
              0);
      unsigned.putLong(payload.length + RecordSealer.OVERHEAD, 1);
      // 3: the genuine record moved to another offset
      byte[] moved = new byte[(int) genuine];
      kv.copy(0, moved);

      for (byte[] forged : new byte[][] {signedByMe.array(), unsigned.array(), moved}) {
        WcStatus s =
            AttackProbe.post(
                attacker,
                WrOpcode.RDMA_WRITE,
                AttackProbe.remoteAddress(rw) + at,
                AttackProbe.rkey(rw),
                forged,
                forged.length,
                0);
        assertEquals(WcStatus.SUCCESS, s, "the write itself is within the attacker's grant");
        ChannelException e =
            assertThrows(ChannelException.class, () -> reader.readBlocking(at, forged.length));
        assertEquals(ChannelException.Reason.RECORD_REJECTED, e.reason());
        assertTrue(e.getMessage().contains("BAD_SIGNATURE"), e.getMessage());
      }
      assertEquals("price=100", string(reader.readBlocking(0, (int) genuine)), "still reads");
      assertTrue(victim.isOpen());
    }
  }

  @Test
  void anOldOwnerRecordPutBackIsRefused() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      HostedRegion kv = rig.acmeKv;
      SecureRdmaClient attacker = rig.client("acme", "trainer-1");
      SecureRdmaClient victim = rig.client("acme", "dashboard");
      RemoteGrant rw =
          attacker.grant(
              "kvcache", EnumSet.of(Access.READ, Access.WRITE), 0, 65536, Duration.ofSeconds(30));
      RemoteGrant reader =
          victim.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(30));
      long at = 1024;
      long n = kv.seal(at, text("balance=100"));
      assertEquals("balance=100", string(reader.readBlocking(at, (int) n)));
      // the attacker keeps the old record's bytes (what its own RDMA READ of the range returns)
      byte[] old = new byte[(int) n];
      kv.copy(at, old);

      assertEquals(n, kv.seal(at, text("balance=000")));
      assertEquals("balance=000", string(reader.readBlocking(at, (int) n)));

      WcStatus s =
          AttackProbe.post(
              attacker,
              WrOpcode.RDMA_WRITE,
              AttackProbe.remoteAddress(rw) + at,
              AttackProbe.rkey(rw),
              old,
              old.length,
              0);
      assertEquals(WcStatus.SUCCESS, s);
      ChannelException e =
          assertThrows(ChannelException.class, () -> reader.readBlocking(at, (int) n));
      assertEquals(ChannelException.Reason.RECORD_REJECTED, e.reason());
      assertTrue(e.getMessage().contains("ROLLED_BACK"), e.getMessage());

      // A rotation does not launder the put-back record: the host re-seals only what it published
      // (same version), so a reader that never saw the newer version cannot be fooled either.
      int rotated = kv.rotateKey();
      ChannelRig.await(
          () -> AttackProbe.regionKeyGeneration(reader) == rotated, "reader has the new key");
      RemoteGrant fresh =
          victim.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(30));
      ChannelException first =
          assertThrows(ChannelException.class, () -> fresh.readBlocking(at, (int) n));
      assertEquals(ChannelException.Reason.RECORD_REJECTED, first.reason());
    }
  }

  @Test
  void rotationOnTheTimerDeliversTheNewKeyAndReadsKeepWorking() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.regionKeyRotation(Duration.ofSeconds(1)))) {
      HostedRegion kv = rig.acmeKv;
      ByteBuffer model = ChannelRig.bytes(150_000, 9);
      long sealed = kv.seal(0, model);
      SecureRdmaClient c = rig.client("acme", "dashboard");
      // the observer role's grants live at most 30 s: the reading loop must end well before
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.READ), 0, 1 << 20, Duration.ofSeconds(30));
      int start = AttackProbe.regionKeyGeneration(g);
      assertEquals(ByteBuffer.wrap(model.array()), g.readBlocking(0, (int) sealed));
      // 3.5 s here, longer where emulation is slow (timeScale), but at most 20 s: the rotation
      // period (1 s) is not scaled, and the grant expires after 30 s
      Duration loop = ChannelRig.scaled(Duration.ofMillis(3500));
      if (loop.compareTo(Duration.ofSeconds(20)) > 0) {
        loop = Duration.ofSeconds(20);
      }
      long until = System.nanoTime() + loop.toNanos();
      int reads = 0;
      while (System.nanoTime() < until) {
        assertEquals(
            ByteBuffer.wrap(model.array()), g.readBlocking(0, (int) sealed), "read " + reads);
        reads++;
      }
      assertTrue(kv.keyGeneration() >= start + 2, "rotated on the timer: " + kv.keyGeneration());
      ChannelRig.await(
          () -> AttackProbe.regionKeyGeneration(g) == kv.keyGeneration(),
          "the reader holds the newest key");
      assertEquals(ByteBuffer.wrap(model.array()), g.readBlocking(0, (int) sealed));
    }
  }

  @Test
  void aRotationPeriodOutsideItsBoundsIsRefused() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    try (AuditLog log = AuditLog.open(dir.resolve("audit.jsonl"))) {
      HostOptions o =
          new HostOptions()
              .credential(
                  ca.issuePeer(
                      PeerIdentity.of(RegionHost.HOST_TENANT, "host-1"), Duration.ofDays(1)))
              .trust(ca.trust())
              .policy(new PolicyLoader().loadSample())
              .audit(new AuditTrail(log));
      o.check();
      for (Duration bad :
          new Duration[] {null, Duration.ZERO, Duration.ofMillis(-1), Duration.ofMillis(999)}) {
        o.regionKeyRotation(bad);
        RuntimeException e = assertThrows(RuntimeException.class, o::check, "" + bad);
        assertTrue(e.getMessage().contains("regionKeyRotation"), e.getMessage());
      }
      o.regionKeyRotation(Duration.ofSeconds(1));
      o.check();
    }
  }

  @Test
  void keyMaterialIsWipedWhenGrantsEndAndOnClose() throws Exception {
    ChannelRig rig = new ChannelRig(dir);
    HostedRegion kv = rig.acmeKv;
    RemoteGrant held;
    DirectionKeys heldKey;
    try {
      SecureRdmaClient c = rig.client("acme", "dashboard");
      RemoteGrant released =
          c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofSeconds(20));
      DirectionKeys releasedKey =
          AttackProbe.regionKeys(released).keys(AttackProbe.regionKeyGeneration(released));
      released.release().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertTrue(AttackProbe.regionKeys(released).isClosed(), "keyring wiped on release");
      assertTrue(releasedKey.isClosed(), "key wiped on release");

      held = c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofSeconds(20));
      heldKey = AttackProbe.regionKeys(held).keys(AttackProbe.regionKeyGeneration(held));
      c.close();
      assertTrue(AttackProbe.regionKeys(held).isClosed(), "keyring wiped when the client closes");
      assertTrue(heldKey.isClosed());
    } finally {
      rig.close();
    }
    assertTrue(kv.isKeyMaterialWiped(), "host's region key and material wiped on close");
    assertThrows(ChannelException.class, () -> kv.seal(0, text("after close")));
  }
}
