package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sealed records: round trip, and every attack at this layer — replay, relocation to another
 * offset, region, tenant or grant, truncation, tampering of any byte, unknown epochs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecordLayerTest {
  private static final int MAX = 64 * 1024;
  private static final RecordBinding KV = RecordBinding.of(7, "acme", "kvcache");

  private SessionPair session;
  private RecordSealer sealer;
  private RecordOpener opener;
  private final ByteBuffer region = ByteBuffer.allocateDirect(1 << 20);
  private final ByteBuffer out = ByteBuffer.allocate(MAX);

  @BeforeEach
  void setUp() throws Exception {
    session = new SessionPair();
    sealer = new RecordSealer(session.initiator.sendKeys(), MAX);
    opener = RecordOpener.forSchedule(session.responder, MAX);
  }

  @AfterEach
  void tearDown() {
    session.close();
  }

  private int seal(String text, RecordBinding binding, long remoteOffset, int at) {
    int n =
        sealer.seal(
            ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)),
            binding,
            remoteOffset,
            region,
            at);
    assertTrue(n > 0, "seal failed: " + n);
    return n;
  }

  private OpenResult open(int at, int available, RecordBinding binding, long remoteOffset) {
    out.clear();
    return opener.open(region, at, available, binding, remoteOffset, out);
  }

  private String opened() {
    return new String(out.array(), 0, out.position(), StandardCharsets.UTF_8);
  }

  @Test
  void shouldOpenWhatWasSealedAndHideThePlaintext() {
    int n = seal("model weights, shard 3", KV, 4096, 4096);
    assertEquals(22 + RecordSealer.OVERHEAD, n);
    byte[] onTheWire = new byte[n];
    region.get(4096, onTheWire);
    assertTrue(
        !new String(onTheWire, StandardCharsets.ISO_8859_1).contains("weights"),
        "plaintext visible");
    assertEquals(OpenResult.OK, open(4096, n, KV, 4096));
    assertEquals("model weights, shard 3", opened());
    assertEquals(0, opener.lastSequence());
  }

  @Test
  void shouldRejectAReplayedRecord() {
    int n = seal("pay 100", KV, 0, 0);
    assertEquals(OpenResult.OK, open(0, n, KV, 0));
    assertEquals(OpenResult.REPLAYED, open(0, n, KV, 0));
  }

  @Test
  void shouldRejectARecordRelocatedToAnotherOffsetRegionTenantOrGrant() {
    int n = seal("secret", KV, 0, 0);
    byte[] copy = new byte[n];
    region.get(0, copy);
    region.put(8192, copy);
    assertEquals(OpenResult.AUTH_FAILED, open(8192, n, KV, 8192), "moved to another offset");
    assertEquals(
        OpenResult.AUTH_FAILED,
        open(0, n, RecordBinding.of(7, "acme", "other"), 0),
        "another region");
    assertEquals(
        OpenResult.AUTH_FAILED,
        open(0, n, RecordBinding.of(7, "globex", "kvcache"), 0),
        "another tenant");
    assertEquals(
        OpenResult.AUTH_FAILED,
        open(0, n, RecordBinding.of(8, "acme", "kvcache"), 0),
        "another grant");
    assertEquals(OpenResult.OK, open(0, n, KV, 0), "failed attempts did not burn the sequence");
  }

  @Test
  void shouldRejectEveryTamperedByte() {
    int n = seal("0123456789abcdef", KV, 0, 0);
    byte[] original = new byte[n];
    region.get(0, original);
    for (int i = 0; i < n; i++) {
      region.put(0, original);
      region.put(i, (byte) (original[i] ^ 0x01));
      OpenResult r = open(0, n, KV, 0);
      assertNotEquals(OpenResult.OK, r, "flipped byte " + i);
    }
    region.put(0, original);
    assertEquals(OpenResult.OK, open(0, n, KV, 0));
  }

  @Test
  void shouldRejectATruncatedRecord() {
    int n = seal("a longer message", KV, 0, 0);
    assertEquals(OpenResult.TRUNCATED, open(0, n - 1, KV, 0));
    assertEquals(OpenResult.TRUNCATED, open(0, 10, KV, 0));
    region.put(
        RecordFlyweight.LENGTH_OFFSET + 3,
        (byte) (region.get(RecordFlyweight.LENGTH_OFFSET + 3) - 1));
    assertEquals(OpenResult.AUTH_FAILED, open(0, n, KV, 0), "shortened length field");
  }

  @Test
  void shouldRejectMalformedHeaders() {
    int n = seal("x", KV, 0, 0);
    region.put(RecordFlyweight.VERSION_OFFSET, (byte) 9);
    assertEquals(OpenResult.MALFORMED, open(0, n, KV, 0));
    region.put(RecordFlyweight.VERSION_OFFSET, RecordFlyweight.VERSION);
    region.putInt(RecordFlyweight.LENGTH_OFFSET, MAX + 1);
    assertEquals(OpenResult.MALFORMED, open(0, n, KV, 0));
    region.putInt(RecordFlyweight.LENGTH_OFFSET, -5);
    assertEquals(OpenResult.MALFORMED, open(0, n, KV, 0));
  }

  @Test
  void shouldAcceptOutOfOrderRecordsInsideTheWindowOnce() {
    int[] at = new int[5];
    int[] len = new int[5];
    int pos = 0;
    for (int i = 0; i < 5; i++) {
      at[i] = pos;
      len[i] = seal("record " + i, KV, pos, pos);
      pos += len[i];
    }
    for (int i : new int[] {4, 0, 2, 1, 3}) {
      assertEquals(OpenResult.OK, open(at[i], len[i], KV, at[i]), "record " + i);
      assertEquals("record " + i, opened());
    }
    for (int i = 0; i < 5; i++) {
      assertEquals(OpenResult.REPLAYED, open(at[i], len[i], KV, at[i]));
    }
  }

  @Test
  void shouldRejectRecordsBehindTheReplayWindow() {
    int first = seal("old", KV, 0, 0);
    for (int i = 0; i < ReplayWindow.SIZE; i++) {
      int n = seal("x", KV, 100_000, 100_000);
      assertEquals(OpenResult.OK, open(100_000, n, KV, 100_000));
    }
    assertEquals(OpenResult.REPLAYED, open(0, first, KV, 0), "too old to tell: refused");
  }

  @Test
  void shouldOpenAcrossARekeyAndTheGraceWindow() {
    int oldRecord = seal("epoch 0", KV, 0, 0);
    session.initiator.rekey();
    session.responder.rekey();
    sealer.rekey(session.initiator.sendKeys());
    assertEquals(1, sealer.epoch());
    assertEquals(0, sealer.nextSequence());
    int n = seal("epoch 1", KV, 4096, 4096);
    assertEquals(OpenResult.OK, open(4096, n, KV, 4096));
    assertEquals(1, opener.lastEpoch());
    assertEquals(
        OpenResult.OK, open(0, oldRecord, KV, 0), "previous epoch inside its grace window");
    assertEquals("epoch 0", opened());
  }

  @Test
  void shouldRejectAnEpochWithoutKeys() {
    int n = seal("x", KV, 0, 0);
    region.putInt(RecordFlyweight.EPOCH_OFFSET, 9);
    assertEquals(OpenResult.UNKNOWN_EPOCH, open(0, n, KV, 0));
  }

  @Test
  void shouldGiveEveryRecordANewSequenceAndRefuseOversizedPayloads() {
    seal("a", KV, 0, 0);
    seal("b", KV, 64, 64);
    assertEquals(2, sealer.nextSequence());
    assertEquals(
        RecordSealer.TOO_LARGE, sealer.seal(ByteBuffer.allocate(MAX + 1), KV, 0, region, 0));
    assertEquals(
        RecordSealer.NO_ROOM,
        sealer.seal(ByteBuffer.allocate(100), KV, 0, region, region.capacity() - 50));
    assertEquals(2, sealer.nextSequence(), "refused seals use no sequence");
  }

  @Test
  void shouldRejectBadBindingsAndEpochRegressions() {
    assertThrows(RecordException.class, () -> RecordBinding.of(1, "", "r"));
    assertThrows(RecordException.class, () -> RecordBinding.of(1, "t", "x".repeat(256)));
    assertThrows(RecordException.class, () -> sealer.rekey(session.initiator.sendKeys()));
  }

  @Test
  void shouldSealFromAndOpenIntoEveryKindOfBufferAtItsPosition() {
    byte[] text = "tensor block 42".getBytes(StandardCharsets.UTF_8);
    ByteBuffer heapSlice = ByteBuffer.allocate(64).position(5).slice().put(3, text).limit(3 + 15);
    heapSlice.position(3);
    ByteBuffer readOnly = ByteBuffer.wrap(text).asReadOnlyBuffer();
    ByteBuffer direct = ByteBuffer.allocateDirect(15).put(0, text);
    int at = 0;
    for (ByteBuffer plaintext : new ByteBuffer[] {heapSlice, readOnly, direct}) {
      int before = plaintext.position();
      int n = sealer.seal(plaintext, KV, at, region, at);
      assertEquals(15 + RecordSealer.OVERHEAD, n);
      assertEquals(before, plaintext.position(), "sealing does not move the plaintext");
      for (ByteBuffer into :
          new ByteBuffer[] {
            ByteBuffer.allocate(100).position(9).slice().position(4),
            ByteBuffer.allocateDirect(100).position(4)
          }) {
        RecordOpener fresh = RecordOpener.forSchedule(session.responder, MAX);
        assertEquals(OpenResult.OK, fresh.open(region, at, n, KV, at, into));
        assertEquals(4 + 15, into.position());
        byte[] got = new byte[15];
        into.get(4, got);
        assertEquals("tensor block 42", new String(got, StandardCharsets.UTF_8));
      }
      at += 256;
    }
  }

  @Test
  void shouldLeaveNoPlaintextInTheDestinationWhenTheTagFails() {
    int n = seal("the secret plan", KV, 0, 0);
    region.put(
        RecordFlyweight.HEADER_LENGTH + 3,
        (byte) (region.get(RecordFlyweight.HEADER_LENGTH + 3) ^ 1));
    byte[] backing = new byte[64];
    java.util.Arrays.fill(backing, (byte) 0x55);
    ByteBuffer into = ByteBuffer.wrap(backing, 8, 40).slice();
    assertEquals(OpenResult.AUTH_FAILED, opener.open(region, 0, n, KV, 0, into));
    assertEquals(0, into.position(), "nothing delivered");
    String seen = new String(backing, StandardCharsets.ISO_8859_1);
    assertTrue(
        !seen.contains("secret") && !seen.contains("plan"), "unauthenticated plaintext left");
  }
}
