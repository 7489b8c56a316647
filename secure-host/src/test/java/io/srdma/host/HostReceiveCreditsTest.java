package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteResult;
import io.srdma.channel.protocol.Capabilities;
import io.srdma.verbs.DeviceOptions;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Receive credits (capability RECEIVE_CREDITS): a host whose listener stalls — longer than the
 * transport's whole RNR budget — holds its writers back instead of running out of receives, and
 * loses nothing; and the CREDIT_WORD frame is taken only where the host asked for it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostReceiveCreditsTest {
  private static final int RECEIVES = 8;

  @TempDir Path dir;

  @Test
  void shouldHoldTheWriterBackWhileTheListenerStallsPastTheRnrBudgetAndLoseNothing()
      throws Exception {
    Duration rnr = ChannelRig.scaled(Duration.ofMillis(300));
    CountDownLatch release = new CountDownLatch(1);
    int records = 64;
    try (ChannelRig rig =
        new ChannelRig(
            dir, o -> o.receiveDepth(RECEIVES).device(new DeviceOptions().rnrTimeout(rnr)))) {
      rig.acmeKv.onRecord(
          r -> {
            byte[] b = new byte[r.payload().remaining()];
            r.payload().get(b);
            rig.acmeRecords.add(b);
            if (rig.acmeRecords.size() == 1) {
              await(release); // the opener stalls inside the first record's listener
            }
          });
      SecureRdmaClient c =
          rig.track(
              SecureRdmaClient.connect(
                  rig.options("acme", "trainer-1")
                      .stagingSlots(128)
                      .device(new DeviceOptions().rnrTimeout(rnr))));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, records * 64L, Duration.ofMinutes(1));
      ByteBuffer[] payloads = new ByteBuffer[records];
      for (int i = 0; i < records; i++) {
        payloads[i] = ChannelRig.bytes(16, i);
      }
      int sent = 0;
      long stallEnds = System.nanoTime() + 3 * rnr.toNanos();
      long deadline = System.nanoTime() + ChannelRig.scaled(Duration.ofSeconds(30)).toNanos();
      while (sent < records) {
        assertTrue(System.nanoTime() < deadline, "all written within 30 s: " + sent);
        if (release.getCount() > 0 && System.nanoTime() - stallEnds > 0) {
          // three RNR budgets later: nothing posted past the host's receives, the path still up
          assertTrue(
              c.postedPosition() <= RECEIVES,
              c.postedPosition() + " records posted while the host reposted none");
          assertNull(c.dataPathFailure(), "the data path stayed up through the stall");
          release.countDown();
        }
        long r = g.tryWrite(sent * 64L, payloads[sent], 0, 16);
        if (r == WriteResult.BACK_PRESSURED) {
          c.pollCompletions();
          LockSupport.parkNanos(100_000);
          continue;
        }
        assertTrue(r > 0, "accepted: " + WriteResult.name(r));
        assertTrue(
            c.postedPosition() - rig.acmeRecords.size() <= RECEIVES,
            "never more records posted beyond those opened than the host has receives");
        sent++;
      }
      assertEquals(0, release.getCount(), "the writer reached the stall");
      long position = c.postedPosition();
      ChannelRig.await(() -> c.completedPosition() >= position, "every write completed");
      ChannelRig.await(() -> rig.acmeRecords.size() == records, "every record opened");
      for (int i = 0; i < records; i++) {
        assertArrayEquals(payloads[i].array(), rig.acmeRecords.get(i), "record " + i);
      }
      assertNull(c.dataPathFailure(), "the data path stayed up");
      assertEquals(1, rig.host.sessions().size(), "the session lives");
      // at least one write, and never more than one per RECEIVES / 2 reposts (a deferred credit
      // goes out later as one write covering more)
      long writes = rig.host.stats().receiveCreditWrites();
      assertTrue(
          writes >= 1 && writes <= records / (RECEIVES / 2),
          writes + " credit writes for " + records + " records");
    }
  }

  @Test
  void shouldWriteACreditOwedWhileAGrantHeldTheSendQueueOnceItIsFree() throws Exception {
    int records = 3 * RECEIVES;
    try (ChannelRig rig = new ChannelRig(dir, o -> o.receiveDepth(RECEIVES))) {
      SecureRdmaClient c =
          rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-1").stagingSlots(64)));
      RemoteGrant g =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, records * 64L, Duration.ofMinutes(1));
      SessionSendQueue sendQueue = rig.session(c).sendQueue;
      int sent = 0;
      // as a grant's bind waiting for its completion would: the opener cannot write a credit
      sendQueue.lock();
      try {
        while (sent < records && g.tryWrite(sent * 64L, ChannelRig.bytes(16, sent), 0, 16) > 0) {
          sent++;
        }
        assertEquals(RECEIVES, sent, "the receive depth before any credit");
        int opened = sent;
        ChannelRig.await(() -> rig.acmeRecords.size() == opened, "every record posted opened");
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // the opener tries, and owes
        assertEquals(
            WriteResult.BACK_PRESSURED,
            g.tryWrite(sent * 64L, ChannelRig.bytes(16, sent), 0, 16),
            "no credit while the send queue is held");
      } finally {
        sendQueue.unlock();
      }
      long deadline = System.nanoTime() + ChannelRig.scaled(Duration.ofSeconds(10)).toNanos();
      while (sent < records) {
        // nothing more arrives at the host to prompt a credit: only its retry writes the owed one
        long r = g.tryWrite(sent * 64L, ChannelRig.bytes(16, sent), 0, 16);
        if (r == WriteResult.BACK_PRESSURED) {
          assertTrue(System.nanoTime() < deadline, "the owed credit came within 10 s");
          c.pollCompletions();
          LockSupport.parkNanos(100_000);
          continue;
        }
        assertTrue(r > 0, "accepted: " + WriteResult.name(r));
        sent++;
      }
      ChannelRig.await(() -> rig.acmeRecords.size() == records, "every record opened");
      assertNull(c.dataPathFailure(), "the data path stayed up");
      assertTrue(rig.host.stats().receiveCreditsDeferred() >= 1, "the deferred credit counted");
    }
  }

  @Test
  void shouldRefuseCreditWordTheHostDidNotAskFor() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir);
        RawPeer peer = new RawPeer(rig, "acme", "trainer-1", 0, p -> p.creditWord(64, 7))) {
      assertRefused(peer, "CREDIT_WORD without RECEIVE_CREDITS");
    }
  }

  @Test
  void shouldRefuseKeyConfirmWithoutTheCreditWordItAskedFor() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir);
        RawPeer peer = new RawPeer(rig, "acme", "trainer-1", credits(), p -> {})) {
      assertRefused(peer, "KEY_CONFIRM before CREDIT_WORD");
    }
  }

  @Test
  void shouldRefuseASecondCreditWord() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir);
        RawPeer peer =
            new RawPeer(
                rig,
                "acme",
                "trainer-1",
                credits(),
                p -> {
                  p.creditWord(64, 7);
                  p.creditWord(128, 7);
                })) {
      assertRefused(peer, "a second CREDIT_WORD");
    }
  }

  private static int credits() {
    return Capabilities.RECEIVE_DEPTH | Capabilities.RECEIVE_CREDITS;
  }

  private static void assertRefused(RawPeer peer, String why) {
    assertNotNull(peer.refusal, "refused with ERROR");
    assertTrue(peer.refusal.contains(why), peer.refusal);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
