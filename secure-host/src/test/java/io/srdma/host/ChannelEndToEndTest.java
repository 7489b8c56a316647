package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.RekeyPolicy;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChannelEndToEndTest {
  @TempDir Path dir;

  @Test
  void writesAreSealedOnTheWireAndOpenedByTheOwner() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 4096, 64 * 1024, Duration.ofMinutes(1));
      byte[] secret = "the quarterly numbers, very secret".getBytes();
      g.writeBlocking(0, ByteBuffer.wrap(secret));
      ChannelRig.await(() -> rig.acmeRecords.size() == 1, "record opened");
      assertArrayEquals(secret, rig.acmeRecords.get(0));
      byte[] raw = new byte[secret.length + SealedLayout.RECORD_OVERHEAD];
      rig.acmeKv.copy(4096, raw);
      assertTrue(indexOf(raw, secret) < 0, "plaintext must not be in the region");
      assertEquals(1, rig.host.stats().recordsOpened());
      assertEquals(1, rig.host.grants().size());
      assertTrue(rig.audit().contains("\"grant\""));
    }
  }

  @Test
  void largeWritesAreSplitIntoRecordsAndArriveWhole() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20, Duration.ofMinutes(1));
      ByteBuffer data = ChannelRig.bytes(600_000, 7);
      g.writeBlocking(0, data);
      int records = 10;
      ChannelRig.await(() -> rig.acmeRecords.size() == records, "10 records");
      ByteBuffer joined = ByteBuffer.allocate(600_000);
      for (byte[] r : rig.acmeRecords) {
        joined.put(r);
      }
      assertArrayEquals(data.array(), joined.array());
    }
  }

  @Test
  void readersOpenOwnerSealedRecordsWithTheRegionKey() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      ByteBuffer model = ChannelRig.bytes(100_000, 3);
      long sealed = rig.acmeKv.seal(8192, model);
      SecureRdmaClient c = rig.client("acme", "dashboard");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.READ), 8192, 256 * 1024, Duration.ofSeconds(20));
      ByteBuffer got = g.readBlocking(0, (int) sealed);
      assertEquals(ByteBuffer.wrap(model.array()), got);
      assertEquals(
          ByteBuffer.wrap(model.array()), g.readBlocking(0, (int) sealed), "re-read works");
    }
  }

  @Test
  void rekeyUnderLoadLosesAndRejectsNothing() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c =
          rig.track(
              SecureRdmaClient.connect(
                  rig.options("acme", "trainer-2")
                      .rekeyPolicy(RekeyPolicy.fromSystemProperties().withMaxRecords(40))));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20, Duration.ofMinutes(1));
      // one rekey is outstanding at a time, so how many epochs 400 records span depends on how
      // fast the host acknowledges; keep writing until five rekeys happened (bounded), then check
      int written = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (written < 400 || (c.epoch() < 5 && System.nanoTime() < deadline)) {
        g.write((written % 1000) * 1024L, ChannelRig.bytes(200, written));
        written++;
        if (written % 40 == 0) {
          g.writeBlocking((written % 1000) * 1024L, ChannelRig.bytes(10, 1));
          written++;
        }
      }
      int total = written + 1;
      g.writeBlocking(1000 * 1024L, ChannelRig.bytes(10, 1));
      try {
        ChannelRig.await(() -> rig.acmeRecords.size() == total, "every record");
      } catch (AssertionError e) {
        throw new AssertionError(
            e.getMessage()
                + ": "
                + rig.acmeRecords.size()
                + " opened, "
                + rig.host.stats()
                + ", epoch "
                + c.epoch()
                + "\n"
                + rig.audit(),
            e);
      }
      assertEquals(0, rig.host.stats().recordsRejected());
      assertTrue(c.epoch() >= 5, "epoch " + c.epoch());
    }
  }

  @Test
  void recordsWrittenRightBeforeCloseAreStillOpened() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      for (int round = 0; round < 5; round++) {
        int before = rig.acmeRecords.size();
        SecureRdmaClient c = SecureRdmaClient.connect(rig.options("acme", "trainer-1"));
        RemoteGrant g =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20, Duration.ofMinutes(1));
        for (int i = 0; i < 20; i++) {
          g.writeBlocking(i * 1024L, ChannelRig.bytes(100, i));
        }
        c.close(); // CLOSE travels on the control connection and may overtake the writes
        ChannelRig.await(
            () -> rig.acmeRecords.size() == before + 20, "all 20 records of round " + round);
      }
      assertEquals(0, rig.host.stats().recordsRejected());
    }
  }

  @Test
  void recordsWrittenRightBeforeAReleaseAreStillOpened() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      int expected = 0;
      for (int round = 0; round < 10; round++) {
        RemoteGrant g =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1 << 20, Duration.ofMinutes(1));
        for (int i = 0; i < 20; i++) {
          g.writeBlocking(i * 1024L, ChannelRig.bytes(100, i));
        }
        expected += 20;
        // RELEASE travels on the control connection and may overtake the records' notifications
        g.release().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
      int all = expected;
      ChannelRig.await(() -> rig.acmeRecords.size() == all, all + " records opened");
      assertEquals(0, rig.host.stats().recordsRejected());
      assertFalse(rig.audit().contains("\"action\":\"access_violation\""), rig.audit());
    }
  }

  @Test
  void perGrantRegionScopingWorksLikeWindows() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.scoping(HostOptions.Scoping.REGION))) {
      assertTrue(rig.host.scopedByRegion());
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 65536, 4096, Duration.ofMinutes(1));
      g.writeBlocking(100, ChannelRig.bytes(1000, 9));
      ChannelRig.await(() -> rig.acmeRecords.size() == 1, "record");
      assertEquals("region", rig.host.grants().get(0).scopedBy());
    }
  }

  static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
