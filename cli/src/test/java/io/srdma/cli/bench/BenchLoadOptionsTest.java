package io.srdma.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@code srdma bench --load}'s options: refused before anything runs (the run: LoadRunTest). */
class BenchLoadOptionsTest {
  @Test
  void loadRefusesOptionsOfTheTransportComparisonAndUnfitSizes() {
    BenchCommandTest.Run sizes = BenchCommandTest.bench("--load", "--sizes", "64");
    assertEquals(2, sizes.exit(), sizes.err());
    assertTrue(sizes.err().contains("--sizes does not apply to --load"), sizes.err());
    BenchCommandTest.Run tenants =
        BenchCommandTest.bench("--load", "--sessions", "10", "--tenants", "20");
    assertEquals(2, tenants.exit(), tenants.err());
    assertTrue(tenants.err().contains("more tenants"), tenants.err());
    BenchCommandTest.Run record =
        BenchCommandTest.bench("--load", "--grants", "100000", "--record-size", "4KiB");
    assertEquals(2, record.exit(), record.err());
    assertTrue(record.err().contains("cannot hold a sealed record"), record.err());
    BenchCommandTest.Run many = BenchCommandTest.bench("--load", "--sessions", "10001");
    assertEquals(2, many.exit(), many.err());
    assertTrue(many.err().contains("at most 10000 sessions"), many.err());
    BenchCommandTest.Run alone = BenchCommandTest.bench("--host-process", "--quick");
    assertEquals(2, alone.exit(), alone.err());
    assertTrue(alone.err().contains("--host-process applies to --load only"), alone.err());
    BenchCommandTest.Run openers = BenchCommandTest.bench("--opener-threads", "2", "--quick");
    assertEquals(2, openers.exit(), openers.err());
    assertTrue(openers.err().contains("--opener-threads applies to --load only"), openers.err());
    BenchCommandTest.Run negative = BenchCommandTest.bench("--load", "--opener-threads", "-1");
    assertEquals(2, negative.exit(), negative.err());
    assertTrue(negative.err().contains("--opener-threads must be 1..256"), negative.err());
    BenchCommandTest.Run help = BenchCommandTest.bench("--help");
    assertTrue(help.out().contains("--load") && help.out().contains("--sessions"), help.out());
    assertTrue(help.out().contains("--host-process"), help.out());
    assertTrue(help.out().contains("--opener-threads"), help.out());
  }
}
