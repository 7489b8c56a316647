package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every transport moves N messages of every default size, and the receiver gets each one intact:
 * same count, sequence numbers in order, and the same CRC32C over everything as the sender sent.
 * Nothing here is timed.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TransportRoundTripTest {
  private static final int[] SIZES = {8, 64, 4096, 65536, 1048576};
  private static BenchContext context;

  @BeforeAll
  static void createContext() {
    context = new BenchContext("soft", 8);
  }

  @AfterAll
  static void closeContext() {
    context.close();
  }

  static Stream<Arguments> transports() {
    return Transports.REGISTRY.keySet().stream().map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void shouldDeliverEveryMessageIntactAtEverySize(String name) throws Exception {
    try (BenchTransport t = Transports.REGISTRY.get(name).create(context)) {
      assumeTrue(
          t.unavailableReason().isEmpty(),
          () -> name + " unavailable here: " + t.unavailableReason().orElse(""));
      assertEquals(name, t.name());
      for (int size : SIZES) {
        long n = size >= 1 << 20 ? 24 : 300;
        t.prepare(size);

        ThroughputResult r = t.throughput(RunSpec.ofMessages(n, true, 8));
        assertEquals(n, r.messagesSent(), name + " " + size + ": sent");
        assertEquals(n, r.messagesDelivered(), name + " " + size + ": delivered");
        assertEquals(0, r.sequenceErrors(), name + " " + size + ": sequence errors");
        assertNotEquals(0, r.senderChecksum(), name + " " + size + ": checksum computed");
        assertEquals(r.senderChecksum(), r.receiverChecksum(), name + " " + size + ": checksum");
        assertEquals(n, r.writesCompleted(), name + " " + size + ": write completions");
        assertTrue(r.intact());

        Histogram h = new Histogram(3);
        long m = size >= 1 << 20 ? 5 : 40;
        ThroughputResult l = t.latency(RunSpec.ofMessages(m, true, 1), h);
        assertEquals(m, l.messagesDelivered(), name + " " + size + ": latency run delivered");
        assertEquals(m, h.getTotalCount(), name + " " + size + ": one sample per message");
        assertEquals(l.senderChecksum(), l.receiverChecksum(), name + " " + size + ": latency");
        assertTrue(l.intact());
      }
      if (name.startsWith("tls-")) {
        String suite = t.negotiated().orElseThrow(() -> new AssertionError(name + ": no suite"));
        assertTrue(
            suite.matches("TLSv1\\.3 TLS_(AES_(128|256)_GCM|CHACHA20_POLY1305)_SHA\\d+"), suite);
      } else {
        assertTrue(t.negotiated().isEmpty(), name + " negotiates nothing");
      }
    }
  }

  @ParameterizedTest(name = "depth {0}")
  @MethodSource("depths")
  void shouldDeliverIntactWithAnyPipelineDepth(int depth) throws Exception {
    try (PlainWriteTransport t = new PlainWriteTransport("soft", depth)) {
      t.prepare(4096);
      ThroughputResult r = t.throughput(RunSpec.ofMessages(500, true, depth));
      assertEquals(500, r.messagesDelivered());
      assertEquals(r.senderChecksum(), r.receiverChecksum());
      assertTrue(r.intact());
      // a second run on the same connection starts from a clean state
      ThroughputResult again = t.throughput(RunSpec.ofMessages(37, true, depth));
      assertEquals(37, again.messagesDelivered());
      assertTrue(again.intact());
    }
  }

  static Stream<Arguments> depths() {
    return Stream.of(1, 2, 3, 16, 64).map(Arguments::of);
  }
}
