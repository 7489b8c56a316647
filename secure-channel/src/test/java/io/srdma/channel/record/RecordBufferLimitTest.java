package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Buffers whose limit is below their capacity (slices, flipped buffers). Found by
 * RecordOpenerFuzzTest (seed crash-ff4903879686df6771d893fdcb0b7bd5e597ea3a): the range was checked
 * against the capacity, the copy against the limit, so a record running past the limit threw
 * IndexOutOfBoundsException on the data path instead of a typed result.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecordBufferLimitTest {
  private static final RecordBinding KV = RecordBinding.of(7, "acme", "kvcache");

  private SessionPair session;
  private RecordSealer sealer;
  private RecordOpener opener;

  @BeforeEach
  void setUp() throws Exception {
    session = new SessionPair();
    sealer = new RecordSealer(session.initiator.sendKeys(), 1024);
    opener = RecordOpener.forSchedule(session.responder, 1024);
  }

  @AfterEach
  void tearDown() {
    session.close();
  }

  @Test
  void shouldRefuseARecordRunningPastTheSourceLimit() {
    ByteBuffer region = ByteBuffer.allocateDirect(256);
    byte[] text = "past the limit".getBytes(StandardCharsets.UTF_8);
    int n = sealer.seal(ByteBuffer.wrap(text), KV, 0, region, 100);
    assertTrue(n > 0);
    region.limit(100 + n - 1);
    ByteBuffer out = ByteBuffer.allocate(64);
    assertEquals(OpenResult.MALFORMED, opener.open(region, 100, n, KV, 0, out));
    region.limit(100 + n);
    assertEquals(OpenResult.OK, opener.open(region, 100, n, KV, 0, out));
  }

  @Test
  void shouldSayNoRoomForADestinationLimitTooShort() {
    ByteBuffer region = ByteBuffer.allocateDirect(256).limit(40);
    long before = sealer.nextSequence();
    assertEquals(
        RecordSealer.NO_ROOM,
        sealer.seal(ByteBuffer.wrap(new byte[16]), KV, 0, region, 0),
        "a record of 16 bytes plus overhead does not fit before the limit 40");
    assertEquals(before, sealer.nextSequence(), "no sequence spent");
  }
}
