package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sealed channel on the {@code loopback} provider, whatever provider the rest of the suite runs
 * on: there the client's staging ring is heap memory and records are sealed straight into it
 * (DeviceAttributes.localHeapMemory), so every size, a multi-record write and a ring that wraps
 * many times must still arrive whole, in order, and only as ciphertext in the region.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoopbackChannelTest {
  @TempDir Path dir;

  private static SecureRdmaClient client(ChannelRig rig, String peer) {
    return rig.track(
        SecureRdmaClient.connect(rig.options("acme", peer).provider("loopback").stagingSlots(8)));
  }

  @Test
  void recordsSealedStraightIntoHeapStagingArriveWholeAndOnlyAsCiphertext() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.provider("loopback"))) {
      SecureRdmaClient c = client(rig, "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20, Duration.ofMinutes(1));
      int[] sizes = {1, 64, 4096, 64 * 1024};
      long at = 0;
      for (int i = 0; i < sizes.length; i++) {
        ByteBuffer data = ChannelRig.bytes(sizes[i], 11 + i);
        g.writeBlocking(at, data);
        int n = i + 1;
        ChannelRig.await(() -> rig.acmeRecords.size() == n, "record of " + sizes[i] + " B");
        assertArrayEquals(data.array(), rig.acmeRecords.get(i), sizes[i] + " B");
        byte[] raw = new byte[sizes[i] + SealedLayout.RECORD_OVERHEAD];
        rig.acmeKv.copy(at, raw);
        if (sizes[i] >= 64) {
          assertTrue(ChannelEndToEndTest.indexOf(raw, data.array()) < 0, "plaintext in the region");
        }
        at += raw.length;
      }

      // a multi-record write (sealed on the sealing threads into the same heap ring)
      rig.acmeRecords.clear();
      ByteBuffer large = ChannelRig.bytes(600_000, 5);
      g.writeBlocking(0, large);
      ChannelRig.await(() -> rig.acmeRecords.size() == 10, "10 records");
      ByteBuffer joined = ByteBuffer.allocate(600_000);
      rig.acmeRecords.forEach(joined::put);
      assertArrayEquals(large.array(), joined.array());

      // 8 staging slots, 400 pipelined writes: the ring wraps 50 times, each record its own bytes
      rig.acmeRecords.clear();
      int writes = 400;
      for (int i = 0; i < writes; i++) {
        g.write(i * 2048L, ChannelRig.bytes(1000 + i, i));
      }
      g.writeBlocking(writes * 2048L, ChannelRig.bytes(10, 1));
      ChannelRig.await(() -> rig.acmeRecords.size() == writes + 1, "every pipelined record");
      for (int i = 0; i < writes; i++) {
        assertArrayEquals(
            ChannelRig.bytes(1000 + i, i).array(), rig.acmeRecords.get(i), "record " + i);
      }
      assertEquals(0, rig.host.stats().recordsRejected());
    }
  }
}
