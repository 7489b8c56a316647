package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.CpuAffinity;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.DeviceOptions;
import org.junit.jupiter.api.Test;

/** A client that asks for pinned soft responders never shares a context whose are not. */
class SharedDeviceContextCpusTest {
  @Test
  void contextsWithOtherResponderCpusAreNotShared() {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    int cpu = CpuAffinity.current().toArray()[0];
    DeviceOptions unpinned = new DeviceOptions();
    DeviceOptions pinned = new DeviceOptions().responderCpus(CpuSet.of(cpu));
    try (SharedDeviceContext a = SharedDeviceContext.acquire("soft", unpinned)) {
      assertFalse(SharedDeviceContext.isOpen("soft", pinned));
      try (SharedDeviceContext b = SharedDeviceContext.acquire("soft", pinned);
          SharedDeviceContext c =
              SharedDeviceContext.acquire(
                  "soft", new DeviceOptions().responderCpus(CpuSet.of(cpu)))) {
        assertNotSame(a.context(), b.context());
        assertSame(b.context(), c.context(), "the same CPUs share");
        assertTrue(SharedDeviceContext.isOpen("soft", pinned));
      }
    }
  }
}
