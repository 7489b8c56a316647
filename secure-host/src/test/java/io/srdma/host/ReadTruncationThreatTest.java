package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.record.OwnerSealer;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A multi-record READ cut short: a peer that may write the range (or the host's memory) spoils the
 * header of a later record, or wipes the records after some record, hoping the reader returns the
 * records before it as the whole range. The records of a read end only where the rest of the range
 * was never written (zero bytes) after a record that does not say another follows; anything else
 * fails the read with {@code RECORD_REJECTED} naming where the records stopped.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadTruncationThreatTest {
  private static final int HEADER = 20;
  @TempDir Path dir;

  private static ByteBuffer text(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String string(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return new String(a, StandardCharsets.UTF_8);
  }

  /**
   * An RDMA WRITE of {@code bytes} at {@code at} of {@code rw}'s range, the writer's checks off.
   */
  private static void overwrite(SecureRdmaClient attacker, RemoteGrant rw, long at, byte[] bytes) {
    WcStatus s =
        AttackProbe.post(
            attacker,
            WrOpcode.RDMA_WRITE,
            AttackProbe.remoteAddress(rw) + at,
            AttackProbe.rkey(rw),
            bytes,
            bytes.length,
            0);
    assertEquals(WcStatus.SUCCESS, s, "the write itself is within the attacker's grant");
  }

  private static void assertStopsAt(RemoteGrant reader, int length, long at, String result) {
    ChannelException e = assertThrows(ChannelException.class, () -> reader.readBlocking(0, length));
    assertEquals(ChannelException.Reason.RECORD_REJECTED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains("offset " + at + " "), e.getMessage());
    assertTrue(e.getMessage().contains(result), e.getMessage());
  }

  @Test
  void aSpoiledHeaderOfALaterRecordFailsTheReadInsteadOfCuttingItShort() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      HostedRegion kv = rig.acmeKv;
      SecureRdmaClient attacker = rig.client("acme", "trainer-1");
      SecureRdmaClient victim = rig.client("acme", "dashboard");
      RemoteGrant rw =
          attacker.grant(
              "kvcache", EnumSet.of(Access.READ, Access.WRITE), 0, 65536, Duration.ofSeconds(30));
      RemoteGrant reader =
          victim.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(30));
      long first = kv.seal(0, text("debit=100;"));
      long second = kv.seal(first, text("credit=100;"));
      long third = kv.seal(first + second, text("audit=ok;"));
      int all = (int) (first + second + third);
      assertEquals("debit=100;credit=100;audit=ok;", string(reader.readBlocking(0, all)));
      assertEquals(
          "debit=100;credit=100;audit=ok;",
          string(reader.readBlocking(0, all + 4096)),
          "reading past the records over never-written memory is the clean end");

      byte[] header = new byte[HEADER];
      kv.copy(first, header);
      byte[] flipped = header.clone();
      flipped[0] ^= 0x40; // the version byte: no longer a record header
      overwrite(attacker, rw, first, flipped);
      assertStopsAt(reader, all, first, "MALFORMED");

      overwrite(attacker, rw, first, new byte[HEADER]); // zeroed, the records after it are not
      assertStopsAt(reader, all, first, "cut short");

      overwrite(attacker, rw, first, header);
      assertEquals(
          "debit=100;credit=100;audit=ok;",
          string(reader.readBlocking(0, all)),
          "the header put back, the whole range reads again");
      assertTrue(victim.isOpen());
    }
  }

  @Test
  void theTailOfALongerRecordAShorterOneOverwroteIsNotTakenForTheEnd() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      HostedRegion kv = rig.acmeKv;
      SecureRdmaClient c = rig.client("acme", "dashboard");
      RemoteGrant reader =
          c.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(30));
      long longer = kv.seal(0, text("a longer value than the one that follows it. ".repeat(6)));
      long shorter = kv.seal(0, text("short"));
      assertTrue(shorter < longer);
      assertEquals("short", string(reader.readBlocking(0, (int) shorter)));
      // the stale tail of the longer record is neither a record nor never-written memory
      assertStopsAt(reader, (int) longer, shorter, "neither a record nor never-written");
      // a record cut off by the read length after the first one is refused as well
      long next = kv.seal(shorter, text("next ".repeat(60)));
      assertTrue(shorter + next >= longer, "the next record covers the stale tail");
      assertStopsAt(reader, (int) (shorter + next - 1), shorter, "TRUNCATED");
      assertEquals(
          "short" + "next ".repeat(60), string(reader.readBlocking(0, (int) (shorter + next))));
    }
  }

  @Test
  void wipingTheRecordsAfterOneFailsTheReadInsteadOfEndingItThere() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      HostedRegion kv = rig.acmeKv;
      SecureRdmaClient attacker = rig.client("acme", "trainer-1");
      SecureRdmaClient victim = rig.client("acme", "dashboard");
      RemoteGrant rw =
          attacker.grant(
              "kvcache", EnumSet.of(Access.READ, Access.WRITE), 0, 65536, Duration.ofSeconds(30));
      RemoteGrant reader =
          victim.grant("kvcache", EnumSet.of(Access.READ), 0, 65536, Duration.ofSeconds(30));
      long first = kv.seal(0, text("debit=100;"));
      byte[] firstAlone = new byte[(int) first]; // as sealed when nothing followed it
      kv.copy(0, firstAlone);
      assertEquals("debit=100;", string(reader.readBlocking(0, (int) first + 4096)));
      long second = kv.seal(first, text("credit=100;"));
      long third = kv.seal(first + second, text("audit=ok;"));
      int all = (int) (first + second + third);
      String whole = "debit=100;credit=100;audit=ok;";
      assertEquals(whole, string(reader.readBlocking(0, all + 4096)));

      // wiped after the first record: zero bytes where the first says another follows
      overwrite(attacker, rw, first, new byte[(int) (second + third)]);
      assertStopsAt(reader, all, first, "cut short");
      assertStopsAt(reader, all + 4096, first, "cut short");
      assertEquals("debit=100;", string(reader.readBlocking(0, (int) first)), "read alone");

      kv.seal(first, text("credit=100;"));
      kv.seal(first + second, text("audit=ok;"));
      assertEquals(whole, string(reader.readBlocking(0, all + 4096)));
      // only the last wiped
      overwrite(attacker, rw, first + second, new byte[(int) third]);
      assertStopsAt(reader, all, first + second, "cut short");

      // the first record put back as it was before anything followed it, the rest wiped: the
      // reader opened a newer version there, so it is a rollback, not the end
      overwrite(attacker, rw, 0, firstAlone);
      overwrite(attacker, rw, first, new byte[(int) (second + third)]);
      assertStopsAt(reader, all, 0, "ROLLED_BACK");

      // one seal of several records (largest payload: the default, 64 KiB)
      int max = SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD;
      byte[] big = new byte[3 * max + 100];
      Arrays.fill(big, (byte) 'x');
      long many = kv.seal(65536, ByteBuffer.wrap(big));
      RemoteGrant rwBig =
          attacker.grant(
              "kvcache",
              EnumSet.of(Access.READ, Access.WRITE),
              65536,
              262144,
              Duration.ofSeconds(30));
      RemoteGrant readerBig =
          victim.grant("kvcache", EnumSet.of(Access.READ), 65536, 262144, Duration.ofSeconds(30));
      assertEquals(big.length, readerBig.readBlocking(0, (int) many).remaining());
      long secondRecord = max + OwnerSealer.OVERHEAD;
      overwrite(attacker, rwBig, secondRecord, new byte[(int) (many - secondRecord)]);
      ChannelException e =
          assertThrows(ChannelException.class, () -> readerBig.readBlocking(0, (int) many));
      assertEquals(ChannelException.Reason.RECORD_REJECTED, e.reason(), e.getMessage());
      assertTrue(e.getMessage().contains("offset " + secondRecord + " "), e.getMessage());
      assertTrue(e.getMessage().contains("cut short"), e.getMessage());
      assertTrue(victim.isOpen());
    }
  }
}
