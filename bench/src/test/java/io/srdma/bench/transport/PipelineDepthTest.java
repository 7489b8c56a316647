package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.SealedLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PipelineDepthTest {

  @ParameterizedTest(name = "{0} B -> {1}")
  @CsvSource({
    "8, 256",
    "64, 256",
    "1024, 256",
    "1025, 255",
    "4096, 64",
    "16384, 16",
    "65536, 16",
    "1048576, 16",
    "2097152, 16",
    "4194304, 8",
    "67108864, 1"
  })
  void autoKeeps256KiBInFlightWithin16To256MessagesAnd32MiBOfRing(int size, int expected) {
    PipelineDepth auto = PipelineDepth.auto();
    assertEquals(expected, auto.forSize(size));
    assertTrue((long) auto.forSize(size) * size <= Math.max(size, PipelineDepth.AUTO_RING_BYTES));
  }

  @Test
  void aFixedDepthIsTheSameAtEverySize() {
    PipelineDepth d = PipelineDepth.parse(" 48 ");
    assertEquals(48, d.forSize(64));
    assertEquals(48, d.forSize(1 << 20));
    assertEquals("48", d.toString());
  }

  @Test
  void autoParsesInAnyCase() {
    PipelineDepth d = PipelineDepth.parse("AUTO");
    assertTrue(d.isAuto());
    assertEquals("auto", d.toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "-3", "1025", "deep", "", "1.5"})
  void refusesWhatIsNotADepthNamingIt(String text) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> PipelineDepth.parse(text));
    assertTrue(e.getMessage().startsWith("--depth must be"), e.getMessage());
  }

  @Test
  void theSealedClientStagesTwiceTheWindowOfTheSizeMeasuredSoItsBackPressureNeverCapsIt() {
    // every size's window fits, with room for writes acknowledged after the host opened them
    for (int size : new int[] {8, 64, 1024, 4096, 65536}) {
      int window = PipelineDepth.auto().forSize(size);
      assertTrue(SealedTransport.stagingSlots(window, 1) >= 2 * window, "at " + size);
    }
    assertEquals(512, SealedTransport.stagingSlots(PipelineDepth.auto().forSize(64), 1));
    // 64 KiB messages: a window of 16 stages in the SDK's default 64 slots, not 512 (32 MiB)
    assertEquals(64, SealedTransport.stagingSlots(PipelineDepth.auto().forSize(65536), 1));
    assertEquals(64, SealedTransport.stagingSlots(16, 1), "the SDK's default floor");
    // 1 MiB messages, 16 records each: the window's 256 records, twice
    assertEquals(512, SealedTransport.stagingSlots(PipelineDepth.auto().forSize(1 << 20), 16));
    assertEquals(2048, SealedTransport.stagingSlots(PipelineDepth.MAX, 1));
    assertEquals(PipelineDepth.MAX, PipelineDepth.of(PipelineDepth.MAX).max());
  }

  @Test
  void smallMessagesFillAWholeWindowInOnePostListAsPlainWritePostsThem() {
    PipelineDepth auto = PipelineDepth.auto();
    // 64 B messages (records of 64 B and the record overhead): the window's 256 go as one list
    long sealed64 = SealedLayout.sealedLength(64, 1 << 16);
    assertTrue(SealedTransport.listRecords(sealed64) >= auto.forSize(64));
    // 1 KiB: as many as fit in 128 KiB
    long sealed1k = SealedLayout.sealedLength(1024, 1 << 16);
    assertEquals(SealedTransport.LIST_BYTES / sealed1k, SealedTransport.listRecords(sealed1k));
    // 4 KiB and larger: 32 records, as before (longer lists of 4 KiB measured slower)
    long sealed4k = SealedLayout.sealedLength(4096, 1 << 16);
    assertEquals(SealedTransport.BATCH, SealedTransport.listRecords(sealed4k));
    assertEquals(SealedTransport.BATCH, SealedTransport.listRecords(65536 + 32));
  }

  @Test
  void refusesASizeThatIsNotPositive() {
    assertThrows(IllegalArgumentException.class, () -> PipelineDepth.auto().forSize(0));
  }
}
