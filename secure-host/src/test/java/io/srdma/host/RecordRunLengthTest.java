package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The byte bound of one notification (docs/protocol.md, "Record runs"): its WRITE may hold at most
 * the records a notification may carry ({@link Capabilities#RUN_RECORDS}), each at most the host's
 * {@code maxRecordPayload} sealed. A longer one is no honest run, whatever its records: the host
 * refuses it whole, opening and delivering none of it. An honest run as long as the bound allows is
 * delivered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecordRunLengthTest {
  private static final int PAYLOAD = 100; // the host's maxRecordPayload
  private static final int SEALED = PAYLOAD + SealedLayout.RECORD_OVERHEAD;
  private static final int BOUND = Capabilities.RUN_RECORDS * SEALED;

  @TempDir Path dir;
  ChannelRig rig;
  SecureRdmaClient acme;
  RemoteGrant g;

  @BeforeEach
  void start() throws Exception {
    rig = new ChannelRig(dir, o -> o.maxRecordPayload(PAYLOAD));
    acme =
        rig.track(
            SecureRdmaClient.connect(rig.options("acme", "trainer-1").maxRecordPayload(PAYLOAD)));
    g = acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
  }

  @AfterEach
  void stop() {
    rig.close();
  }

  @Test
  void aWriteLongerThanTheRecordsOfANotificationCanTakeIsRefusedWhole() throws Exception {
    // 17 whole records of the host's largest size, each valid at its offset: the first 16 would
    // open, but no honest client sends more than 16 records a WRITE
    int n = Capabilities.RUN_RECORDS + 1;
    byte[] all = new byte[n * SEALED];
    for (int k = 0; k < n; k++) {
      byte[] r =
          AttackProbe.sealRecord(acme, g, (long) k * SEALED, ChannelRig.bytes(PAYLOAD, k).array());
      System.arraycopy(r, 0, all, k * SEALED, SEALED);
    }
    long rejected = rig.host.stats().recordsRejected();
    assertEquals(
        WcStatus.SUCCESS,
        AttackProbe.post(
            acme,
            WrOpcode.RDMA_WRITE_WITH_IMM,
            AttackProbe.remoteAddress(g),
            AttackProbe.rkey(g),
            all,
            all.length,
            AttackProbe.immediate(g, 0)));
    ChannelRig.await(
        () -> rig.host.stats().recordsRejected() > rejected || !rig.acmeRecords.isEmpty(),
        "the WRITE refused or opened");
    assertEquals(rejected + 1, rig.host.stats().recordsRejected(), "refused once, as one record");
    assertEquals(0, rig.acmeRecords.size(), "nothing of it opened or delivered");
    // counted after it was audited: the line is there
    assertTrue(
        rig.audit()
            .contains(
                "write of "
                    + all.length
                    + " bytes, more than 16 records of at most "
                    + SEALED
                    + " bytes take"),
        "the audit line says what was refused");

    // the session goes on, and a run exactly as long as the bound is delivered
    assertTrue(acme.isOpen());
    deliversARunAsLongAsTheBound(32768);
  }

  @Test
  void shouldDeliverAnHonestRunAsLongAsTheBound() throws Exception {
    deliversARunAsLongAsTheBound(0);
  }

  /** An honest batch of 16 records of the host's largest size end to end from {@code at}. */
  private void deliversARunAsLongAsTheBound(long at) throws Exception {
    int n = Capabilities.RUN_RECORDS;
    byte[][] payloads = new byte[n][];
    WriteBatch batch = new WriteBatch(n);
    for (int k = 0; k < n; k++) {
      payloads[k] = ChannelRig.bytes(PAYLOAD, 7 * k + 1).array();
      assertTrue(batch.add(at + (long) k * SEALED, ByteBuffer.wrap(payloads[k]), 0, PAYLOAD));
    }
    int before = rig.acmeRecords.size();
    long rejected = rig.host.stats().recordsRejected();
    long notifications = rig.host.stats().writeNotifications();
    assertTrue(g.tryWriteBatch(batch) > 0, "batch accepted");
    ChannelRig.await(() -> rig.acmeRecords.size() == before + n, "every record of the run");
    for (int k = 0; k < n; k++) {
      assertArrayEquals(payloads[k], rig.acmeRecords.get(before + k), "record " + k);
    }
    assertEquals(rejected, rig.host.stats().recordsRejected(), "nothing of it rejected");
    assertEquals(
        1,
        rig.host.stats().writeNotifications() - notifications,
        "one WRITE of " + BOUND + " bytes, the bound");
  }
}
