package io.srdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ReDMArk guessed rkeys because they were an index plus a small key. Over 100,000 live
 * registrations: no repeated rkey, no step between consecutive rkeys that repeats more than chance
 * allows, every bit balanced, and the low byte (the "key" part of index-based schemes) uniform.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RkeyRandomnessTest {
  private static final int N = 100_000;

  @Test
  void shouldIssueUnpredictableUniqueRkeys() {
    ByteBuffer memory = ByteBuffer.allocateDirect(4096);
    List<MemoryRegion> regions = new ArrayList<>(N);
    try (DeviceContext ctx = new SoftProvider().devices().get(0).open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain()) {
      try {
        int[] rkeys = new int[N];
        for (int i = 0; i < N; i++) {
          MemoryRegion mr =
              pd.registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
          regions.add(mr);
          rkeys[i] = mr.rkey();
        }
        Set<Integer> distinct = new HashSet<>();
        Map<Integer, Integer> steps = new HashMap<>();
        int[] ones = new int[32];
        int[] lowByte = new int[256];
        for (int i = 0; i < N; i++) {
          assertTrue(distinct.add(rkeys[i]), "rkey repeated while live: " + rkeys[i]);
          assertTrue(rkeys[i] != 0, "zero rkey");
          if (i > 0) {
            steps.merge(rkeys[i] - rkeys[i - 1], 1, Integer::sum);
          }
          for (int b = 0; b < 32; b++) {
            ones[b] += (rkeys[i] >>> b) & 1;
          }
          lowByte[rkeys[i] & 0xFF]++;
        }
        int commonestStep = steps.values().stream().max(Integer::compare).orElse(0);
        // 99,999 differences of random 32-bit values: a repeat at all is rare, 4 of the same is a
        // pattern.
        assertTrue(
            commonestStep <= 3,
            "a step between consecutive rkeys repeats " + commonestStep + " times");
        for (int b = 0; b < 32; b++) {
          // mean 50,000, sd ~158: 6 sd bounds
          assertTrue(
              Math.abs(ones[b] - N / 2) < 950, "bit " + b + " is set in " + ones[b] + " of " + N);
        }
        double chi2 = 0;
        double expected = N / 256.0;
        for (int count : lowByte) {
          chi2 += (count - expected) * (count - expected) / expected;
        }
        // 255 degrees of freedom: p < 1e-6 above ~390
        assertTrue(chi2 < 390, "low byte not uniform, chi2=" + chi2);
      } finally {
        for (MemoryRegion mr : regions) {
          mr.close();
        }
      }
      assertEquals(0, ((SoftDeviceContext) ctx).rkeys().size());
    }
  }
}
