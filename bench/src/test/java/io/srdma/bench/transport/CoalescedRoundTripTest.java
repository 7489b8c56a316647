package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code --coalesce}: every transport still delivers each message intact and in order when
 * throughput runs send several as one unit (counts that are not a multiple of the unit, a window
 * that cuts units short, sizes where fewer fit in 64 KiB), and a latency run after a coalesced run
 * sends single messages again. Nothing here is timed.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CoalescedRoundTripTest {
  private static final int[] SIZES = {8, 64, 4096, 20_000, 65536, 100_000};

  static Stream<Arguments> cases() {
    return Transports.REGISTRY.keySet().stream()
        .flatMap(t -> Stream.of(Arguments.of(t, 5, 16), Arguments.of(t, 32, 64)));
  }

  @ParameterizedTest(name = "{0}, coalesce {1}, depth {2}")
  @MethodSource("cases")
  void everyMessageArrivesIntactWhenCoalesced(String name, int coalesce, int depth)
      throws Exception {
    try (BenchContext context = new BenchContext("soft", depth, coalesce);
        BenchTransport t = Transports.REGISTRY.get(name).create(context)) {
      assumeTrue(
          t.unavailableReason().isEmpty(),
          () -> name + " unavailable here: " + t.unavailableReason().orElse(""));
      for (int size : SIZES) {
        String what = name + " " + size + " B";
        t.prepare(size);
        long n = 301; // not a multiple of any unit
        ThroughputResult r = t.throughput(RunSpec.ofMessages(n, true, depth));
        assertEquals(n, r.messagesDelivered(), what + ": delivered");
        assertEquals(0, r.sequenceErrors(), what + ": sequence errors");
        assertEquals(r.senderChecksum(), r.receiverChecksum(), what + ": checksum");
        assertTrue(r.intact(), what);

        Histogram h = new Histogram(3);
        ThroughputResult l = t.latency(RunSpec.ofMessages(20, true, 1), h);
        assertEquals(20, l.messagesDelivered(), what + ": latency run delivered");
        assertEquals(20, h.getTotalCount(), what + ": one sample per message");
        assertTrue(l.intact(), what + ": latency run");

        ThroughputResult again = t.throughput(RunSpec.ofMessages(77, true, depth));
        assertEquals(77, again.messagesDelivered(), what + ": second run delivered");
        assertTrue(again.intact(), what + ": second run");
      }
    }
  }

  @Test
  void sealedCoalescesContiguousMessagesIntoFewerRecords() throws Exception {
    try (SealedTransport t = new SealedTransport("soft", 64, 32)) {
      assumeTrue(t.unavailableReason().isEmpty(), () -> t.unavailableReason().orElse(""));
      t.prepare(64);
      ThroughputResult r = t.throughput(RunSpec.ofMessages(1000, true, 64));
      assertTrue(r.intact());
      // a window of 64 messages gives room for at least one full half-window batch at a time
      assertTrue(t.recordsOpened() <= 1000 / 2, "records opened: " + t.recordsOpened());
      t.latency(RunSpec.ofMessages(10, true, 1), new Histogram(3));
      assertEquals(10, t.recordsOpened(), "latency runs send one record per message");
    }
    try (SealedTransport t = new SealedTransport("soft", 64, 1)) {
      assumeTrue(t.unavailableReason().isEmpty(), () -> t.unavailableReason().orElse(""));
      t.prepare(64);
      t.throughput(RunSpec.ofMessages(200, true, 64));
      assertEquals(200, t.recordsOpened(), "without --coalesce, one record per message");
    }
  }

  @Test
  void unitsAreCappedAtSixtyFourKibAndNeverEmpty() {
    assertEquals(32, Payload.coalesced(32, 64));
    assertEquals(16, Payload.coalesced(32, 4096));
    assertEquals(3, Payload.coalesced(32, 20_000));
    assertEquals(1, Payload.coalesced(32, 65536));
    assertEquals(1, Payload.coalesced(32, 1 << 20));
    assertEquals(1, Payload.coalesced(1, 64));
  }
}
