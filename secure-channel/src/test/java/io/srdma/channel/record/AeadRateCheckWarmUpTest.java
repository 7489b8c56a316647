package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The rate check's warm-up calls each candidate's per-record methods often enough that HotSpot's
 * tiered policy queues them for C2 before the rounds begin: a method with no loops of its own goes
 * to C2 once its invocations pass {@code Tier4CompileThreshold} (15,000 by default). 12,000 warm-up
 * records stayed under it, C2 compiled libgcrypt's downcalls during or after the rounds, and on a
 * Zen 3 with Temurin 25 two start-ups of six measured them at 2.5x their compiled time and gave 64
 * B records to the JDK (session 38). Read from this JVM's own flags, so a changed threshold is
 * seen.
 */
class AeadRateCheckWarmUpTest {
  @Test
  void theWarmUpCallsThePerRecordMethodsPastC2sThresholdWithRoomToSpare() {
    HotSpotDiagnosticMXBean hotSpot =
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    Assumptions.assumeTrue(hotSpot != null, "needs HotSpot's diagnostic bean");
    long threshold = Long.parseLong(hotSpot.getVMOption("Tier4CompileThreshold").getValue());
    double scaling = Double.parseDouble(hotSpot.getVMOption("CompileThresholdScaling").getValue());
    long needed = Math.round(threshold * scaling);
    // 7 of 8 warm-up records are 64 B: those calls alone must pass the threshold, twice over
    long small = AeadRateCheck.WARM_RECORDS * 7L / 8;
    assertTrue(
        small >= 2 * needed,
        "warm-up: "
            + small
            + " small records, C2 queues a method after "
            + needed
            + " invocations (Tier4CompileThreshold x CompileThresholdScaling)");
  }
}
