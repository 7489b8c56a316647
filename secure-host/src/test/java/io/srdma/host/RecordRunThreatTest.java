package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import io.srdma.channel.protocol.Capabilities;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Record runs (capability {@code RECORD_RUNS}, docs/protocol.md): records posted together that land
 * end to end go as one WRITE_WITH_IMM, and the host opens each on its own. A run is no way around
 * the per-record checks: a forged, replayed or relocated record inside a run, or bytes after its
 * last whole record, are rejected like a record of its own, and only the records before it are
 * delivered.
 */
class RecordRunThreatTest {
  private static final int PAYLOAD = 100;
  private static final int SEALED = PAYLOAD + SealedLayout.RECORD_OVERHEAD;

  @TempDir Path dir;
  ChannelRig rig;
  SecureRdmaClient acme;
  RemoteGrant g;
  long rejected; // host's rejected records before the attack

  @BeforeEach
  void start() throws Exception {
    rig = new ChannelRig(dir);
    acme = rig.client("acme", "trainer-1");
    g = acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
    rejected = rig.host.stats().recordsRejected();
  }

  @AfterEach
  void stop() throws Exception {
    rig.close();
  }

  @Test
  void recordsPostedTogetherEndToEndGoAsOneNotificationAndEachOpens() throws Exception {
    int n = 16;
    byte[][] payloads = new byte[n][];
    WriteBatch batch = new WriteBatch(n);
    for (int k = 0; k < n; k++) {
      payloads[k] = payload(PAYLOAD);
      assertTrue(batch.add((long) k * SEALED, ByteBuffer.wrap(payloads[k]), 0, PAYLOAD));
    }
    long notifications = rig.host.stats().writeNotifications();
    assertTrue(g.tryWriteBatch(batch) > 0, "batch accepted");
    ChannelRig.await(() -> rig.acmeRecords.size() == n, "every record of the run delivered");
    for (int k = 0; k < n; k++) {
      assertArrayEquals(payloads[k], rig.acmeRecords.get(k), "record " + k + " in order, intact");
    }
    long taken = rig.host.stats().writeNotifications() - notifications;
    assertTrue(
        taken >= 1 && taken <= 2, n + " records end to end took " + taken + " notifications");
    assertEquals(rejected, rig.host.stats().recordsRejected());
  }

  @Test
  void aForgedRecordInsideARunIsRejectedAndNothingAfterItDelivered() throws Exception {
    byte[] first = AttackProbe.sealRecord(acme, g, 0, payload(PAYLOAD));
    byte[] forged = AttackProbe.sealRecord(acme, g, SEALED, payload(PAYLOAD));
    forged[SealedLayout.RECORD_OVERHEAD] ^= 1;
    byte[] third = AttackProbe.sealRecord(acme, g, 2L * SEALED, payload(PAYLOAD));
    assertEquals(WcStatus.SUCCESS, run(0, first, forged, third));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 1, "forged record rejected");
    assertEquals(1, rig.acmeRecords.size(), "only the record before the forged one delivered");
    assertStillDelivers();
  }

  @Test
  void aReplayedOrRelocatedRecordInsideARunIsRejected() throws Exception {
    byte[] first = AttackProbe.sealRecord(acme, g, 0, payload(PAYLOAD));
    assertEquals(WcStatus.SUCCESS, run(0, first, first));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 1, "replay in a run rejected");
    assertEquals(1, rig.acmeRecords.size());

    // sealed for offset 0 of the run's second place: opened at its own offset, it fails
    byte[] a = AttackProbe.sealRecord(acme, g, 4096, payload(PAYLOAD));
    byte[] sealedElsewhere = AttackProbe.sealRecord(acme, g, 8192, payload(PAYLOAD));
    assertEquals(WcStatus.SUCCESS, run(4096, a, sealedElsewhere));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 2, "relocation rejected");
    assertEquals(2, rig.acmeRecords.size(), "the run's first record opened, not the other");
    assertStillDelivers();
  }

  @Test
  void bytesAfterTheLastWholeRecordAreRejected() throws Exception {
    byte[] first = AttackProbe.sealRecord(acme, g, 0, payload(PAYLOAD));
    assertEquals(WcStatus.SUCCESS, run(0, first, payload(7)));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() == rejected + 1, "trailing bytes rejected");
    assertEquals(1, rig.acmeRecords.size(), "the whole record before them delivered");
    assertStillDelivers();
  }

  @Test
  void aRunLongerThanTheProtocolAllowsIsCutAtItsLimit() throws Exception {
    // tiny records: one notification must not make the host open (and its listener take) more
    // records than a run may carry, whatever the grant's size
    int n = Capabilities.RUN_RECORDS + 4;
    byte[][] pieces = new byte[n][];
    for (int k = 0; k < n; k++) {
      pieces[k] =
          AttackProbe.sealRecord(
              acme, g, (long) k * (1 + SealedLayout.RECORD_OVERHEAD), payload(1));
    }
    assertEquals(WcStatus.SUCCESS, run(0, pieces));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() > rejected || rig.acmeRecords.size() == n,
        "the run's records delivered or rejected");
    assertEquals(rejected + 1, rig.host.stats().recordsRejected(), "the record past the limit");
    assertEquals(
        Capabilities.RUN_RECORDS, rig.acmeRecords.size(), "the records within the limit delivered");
    assertStillDelivers();
  }

  @Test
  void noRecordOfARunIsDeliveredOnceItsGrantEnded() throws Exception {
    // the listener revokes the grant of the run's first record (it does not wait for itself): when
    // revoke returns no record of the grant is delivered any more, the rest of the run included
    AtomicInteger delivered = new AtomicInteger();
    AtomicInteger afterRevoke = new AtomicInteger();
    AtomicBoolean revoked = new AtomicBoolean();
    rig.acmeKv.onRecord(
        r -> {
          delivered.incrementAndGet();
          if (revoked.get()) {
            afterRevoke.incrementAndGet();
          } else {
            revoked.set(rig.host.revoke(r.grantId(), "operator"));
          }
        });
    byte[] first = AttackProbe.sealRecord(acme, g, 0, payload(PAYLOAD));
    byte[] second = AttackProbe.sealRecord(acme, g, SEALED, payload(PAYLOAD));
    byte[] third = AttackProbe.sealRecord(acme, g, 2L * SEALED, payload(PAYLOAD));
    long before = rig.host.stats().recordsRejected();
    assertEquals(WcStatus.SUCCESS, run(0, first, second, third));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() > before || delivered.get() == 3,
        "the run's records delivered or dropped");
    assertTrue(revoked.get(), "revoked from the listener");
    assertEquals(0, afterRevoke.get(), "records delivered after revoke returned");
    assertEquals(1, delivered.get());
  }

  @Test
  void anEndOnAnotherThreadStopsTheRunAfterTheRecordBeingDelivered() throws Exception {
    // the opener reads the grant's end after each record without the slots' lock: an operator's
    // revoke on another thread, while the run's first record is in its listener, waits for that
    // record only; the opener sees the end and delivers nothing more of the run
    CountDownLatch inListener = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger delivered = new AtomicInteger();
    AtomicInteger afterRevoke = new AtomicInteger();
    AtomicBoolean revokeReturned = new AtomicBoolean();
    rig.acmeKv.onRecord(
        r -> {
          if (revokeReturned.get()) {
            afterRevoke.incrementAndGet();
          }
          if (delivered.incrementAndGet() == 1) {
            inListener.countDown();
            try {
              release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });
    byte[] first = AttackProbe.sealRecord(acme, g, 0, payload(PAYLOAD));
    byte[] second = AttackProbe.sealRecord(acme, g, SEALED, payload(PAYLOAD));
    byte[] third = AttackProbe.sealRecord(acme, g, 2L * SEALED, payload(PAYLOAD));
    long before = rig.host.stats().recordsRejected();
    assertEquals(WcStatus.SUCCESS, run(0, first, second, third));
    assertTrue(inListener.await(10, TimeUnit.SECONDS), "the run's first record in its listener");
    GrantSlots slots = rig.session(acme).slots;
    int slot = AttackProbe.slot(g);
    HostGrant held = slots.live(slot);
    assertTrue(held != null, "the grant is live while its record is delivered");
    AtomicBoolean revoked = new AtomicBoolean();
    Thread operator =
        new Thread(
            () -> {
              revoked.set(rig.host.revoke(g.id(), "operator"));
              revokeReturned.set(true);
            },
            "test-operator-revoke");
    operator.start();
    try {
      ChannelRig.await(() -> slots.hasEnded(held), "the end marked");
      assertFalse(revokeReturned.get(), "revoke waits for the record in its listener");
    } finally {
      release.countDown();
    }
    operator.join(TimeUnit.SECONDS.toMillis(10));
    assertFalse(operator.isAlive(), "revoke returned once the record was delivered");
    assertTrue(revoked.get());
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() > before || delivered.get() == 3,
        "the rest of the run dropped or delivered");
    assertEquals(1, delivered.get(), "the run stopped after the record being delivered");
    assertEquals(0, afterRevoke.get(), "records delivered after revoke returned");
    assertEquals(before + 1, rig.host.stats().recordsRejected(), "the rest counted once");
  }

  @Test
  void aRunNamingAnotherGrantIsNeverOpenedPastThatGrantsEnd() throws Exception {
    // a notification names a grant by its slot, its length is the WRITE's: a run written through
    // the big grant g, naming a small grant, must not open what lies after the small grant's end
    // (here a record sealed for the small grant at its end, placed through a third grant)
    long at = 65536;
    RemoteGrant small =
        acme.grant("kvcache", EnumSet.of(Access.WRITE), at, 2L * SEALED, Duration.ofMinutes(1));
    RemoteGrant beyond =
        acme.grant(
            "kvcache", EnumSet.of(Access.WRITE), at + 2L * SEALED, 4096, Duration.ofMinutes(1));
    for (int k = 0; k < 2; k++) {
      byte[] inside = AttackProbe.sealRecord(acme, small, (long) k * SEALED, payload(PAYLOAD));
      assertEquals(
          "SUCCESS",
          AttackProbe.writeSilently(
              acme,
              AttackProbe.remoteAddress(small) + (long) k * SEALED,
              AttackProbe.rkey(small),
              inside,
              SEALED));
    }
    byte[] past = AttackProbe.sealRecord(acme, small, 2L * SEALED, payload(PAYLOAD));
    assertEquals(
        "SUCCESS",
        AttackProbe.writeSilently(
            acme, AttackProbe.remoteAddress(beyond), AttackProbe.rkey(beyond), past, SEALED));
    byte[] filler = new byte[3 * SEALED];
    assertEquals(
        WcStatus.SUCCESS,
        AttackProbe.post(
            acme,
            WrOpcode.RDMA_WRITE_WITH_IMM,
            AttackProbe.remoteAddress(g),
            AttackProbe.rkey(g),
            filler,
            filler.length,
            AttackProbe.immediate(small, 0)));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() > rejected || rig.acmeRecords.size() == 3,
        "the run opened");
    assertEquals(2, rig.acmeRecords.size(), "the small grant's two records, not the one past it");
    assertEquals(rejected + 1, rig.host.stats().recordsRejected(), "the rest refused at its end");
  }

  /** One raw WRITE_WITH_IMM of the pieces end to end at {@code rel}, naming {@code rel}. */
  private WcStatus run(long rel, byte[]... pieces) {
    int length = 0;
    for (byte[] p : pieces) {
      length += p.length;
    }
    ByteBuffer all = ByteBuffer.allocate(length);
    for (byte[] p : pieces) {
      all.put(p);
    }
    return AttackProbe.post(
        acme,
        WrOpcode.RDMA_WRITE_WITH_IMM,
        AttackProbe.remoteAddress(g) + rel,
        AttackProbe.rkey(g),
        all.array(),
        length,
        AttackProbe.immediate(g, rel));
  }

  private void assertStillDelivers() throws Exception {
    int before = rig.acmeRecords.size();
    g.writeBlocking(32768, ByteBuffer.wrap(payload(PAYLOAD)));
    ChannelRig.await(() -> rig.acmeRecords.size() == before + 1, "the session still delivers");
    assertTrue(acme.isOpen(), "rejected records in a run do not end the session");
  }

  private static byte[] payload(int n) {
    byte[] b = new byte[n];
    new SecureRandom().nextBytes(b);
    return b;
  }
}
