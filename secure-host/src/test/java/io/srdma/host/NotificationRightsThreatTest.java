package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write notification names a grant by its slot, and the host opens the record where the
 * notification says, not where that WRITE put its bytes: so only a grant that may WRITE can be the
 * source of a delivered record. Otherwise a peer places records while it holds a WRITE grant and
 * has them delivered after that grant was revoked, attributed to a READ-only grant over the same
 * range, by a notification sent through any other live WRITE grant.
 */
class NotificationRightsThreatTest {
  @TempDir Path dir;

  @Test
  void shouldNeverDeliverARecordPlacedUnderARevokedWriteGrantThroughAReadOnlyGrantsSlot()
      throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      List<String> delivered = new CopyOnWriteArrayList<>();
      rig.acmeKv.onRecord(
          r -> {
            byte[] b = new byte[r.payload().remaining()];
            r.payload().get(b);
            delivered.add(new String(b, StandardCharsets.UTF_8));
          });
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      RemoteGrant readOnly =
          acme.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofMinutes(1));
      RemoteGrant writer =
          acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
      RemoteGrant other =
          acme.grant("kvcache", EnumSet.of(Access.WRITE), 131072, 4096, Duration.ofMinutes(1));

      // while the WRITE grant is live: a record sealed for the READ-only grant, placed silently
      byte[] rec =
          AttackProbe.sealRecord(
              acme, readOnly, 8192, "placed-before-revoke".getBytes(StandardCharsets.UTF_8));
      assertEquals(
          "SUCCESS",
          AttackProbe.writeSilently(
              acme,
              AttackProbe.remoteAddress(writer) + 8192,
              AttackProbe.rkey(writer),
              rec,
              rec.length));
      assertTrue(rig.host.revoke(writer.id(), "operator"));
      long rejected = rig.host.stats().recordsRejected();

      // later, a notification through an unrelated live WRITE grant names the READ-only slot
      assertEquals(
          WcStatus.SUCCESS,
          AttackProbe.post(
              acme,
              WrOpcode.RDMA_WRITE_WITH_IMM,
              AttackProbe.remoteAddress(other),
              AttackProbe.rkey(other),
              new byte[rec.length],
              rec.length,
              AttackProbe.immediate(readOnly, 8192)));
      ChannelRig.await(
          () -> rig.host.stats().recordsRejected() == rejected + 1, "the notification refused");
      assertEquals(List.of(), delivered, "nothing delivered under a grant that may not write");
      assertTrue(
          rig.audit().contains("write notification names a grant without WRITE"), rig.audit());

      // the session still serves honest records of its live WRITE grant
      other.writeBlocking(0, java.nio.ByteBuffer.wrap("honest".getBytes(StandardCharsets.UTF_8)));
      ChannelRig.await(() -> delivered.contains("honest"), "the honest record");
      assertEquals(List.of("honest"), delivered);
    }
  }
}
