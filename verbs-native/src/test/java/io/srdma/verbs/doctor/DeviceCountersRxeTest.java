package io.srdma.verbs.doctor;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Reads the real {@code /sys/class/infiniband/rxe0} (the Soft-RoCE guest, docs/softroce.md runs
 * it); skips on machines without it.
 */
class DeviceCountersRxeTest {
  private static final Path SYS = Path.of("/sys");

  @Test
  void shouldReadTheHardwareCountersOfRxe0() {
    assumeTrue(
        Files.isDirectory(SYS.resolve("class/infiniband")),
        "skipped: this machine has no /sys/class/infiniband (no RDMA devices)");
    assumeTrue(
        Files.isDirectory(SYS.resolve("class/infiniband/rxe0")),
        "skipped: this machine has no Soft-RoCE device rxe0 (scripts/softroce creates one)");
    List<DeviceCounter> counters = new DeviceCounters(SYS, "rxe0").read();
    Set<String> hw =
        counters.stream()
            .filter(c -> c.group() == DeviceCounter.Group.HW && c.port() == 1)
            .map(DeviceCounter::name)
            .collect(Collectors.toSet());
    // rdma_rxe's port statistics (drivers/infiniband/sw/rxe/rxe_hw_counters.c)
    for (String name :
        List.of("sent_pkts", "rcvd_pkts", "duplicate_request", "rcvd_rnr_err", "send_err")) {
      assertTrue(hw.contains(name), name + " missing from rxe0 port 1 hw_counters: " + counters);
    }
    assertTrue(
        counters.stream().allMatch(c -> c.device().equals("rxe0")),
        "only rxe0 was asked for: " + counters);
  }
}
