package io.srdma.verbs.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.doctor.DeviceCounter.Group;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeviceCountersTest {
  @TempDir Path dir;

  static void write(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }

  /** rxe0 port 1 and mlx5_0 port 1, with a dangling link, a folder and non-numeric values. */
  static Path fakeSys(Path dir) throws IOException {
    Path sys = dir.resolve("sys");
    Path rxe = sys.resolve("class/infiniband/rxe0/ports/1");
    write(rxe.resolve("counters/port_rcv_data"), "1000\n");
    write(rxe.resolve("counters/port_xmit_data"), "250\n");
    write(rxe.resolve("counters/port_rcv_errors"), "3\n");
    write(rxe.resolve("counters/port_xmit_wait"), "N/A (no PMA)\n");
    Files.createSymbolicLink(rxe.resolve("counters/port_rcv_packets"), dir.resolve("gone"));
    Files.createDirectories(rxe.resolve("counters/port_xmit_packets"));
    write(rxe.resolve("hw_counters/rcvd_rnr_err"), "5\n");
    write(rxe.resolve("hw_counters/duplicate_request"), "18446744073709551615\n");
    write(rxe.resolve("hw_counters/lifespan"), "10\n");
    write(rxe.resolve("hw_counters/send_err"), "-1\n");
    write(rxe.resolve("state"), "4: ACTIVE\n");
    write(
        sys.resolve("class/infiniband/mlx5_0/ports/1/hw_counters/resp_remote_access_errors"),
        "9\n");
    return sys;
  }

  @Test
  void shouldReadNumericCountersOfOneDeviceAndSkipTheRest() throws IOException {
    List<DeviceCounter> got = new DeviceCounters(fakeSys(dir), "rxe0").read();
    assertEquals(
        List.of(
            new DeviceCounter("rxe0", 1, Group.PORT, "port_rcv_data", 1000),
            new DeviceCounter("rxe0", 1, Group.PORT, "port_rcv_errors", 3),
            new DeviceCounter("rxe0", 1, Group.PORT, "port_xmit_data", 250),
            new DeviceCounter("rxe0", 1, Group.HW, "duplicate_request", -1L),
            new DeviceCounter("rxe0", 1, Group.HW, "rcvd_rnr_err", 5)),
        got);
    assertEquals(18446744073709551615.0, got.get(3).asDouble());
  }

  @Test
  void shouldReadEveryDeviceWithoutAName() throws IOException {
    List<DeviceCounter> got = new DeviceCounters(fakeSys(dir), null).read();
    assertEquals("mlx5_0", got.get(0).device());
    assertEquals("resp_remote_access_errors", got.get(0).name());
    assertEquals(6, got.size());
  }

  @Test
  void shouldFindNothingWithoutInfinibandOrTheDevice() throws IOException {
    assertTrue(new DeviceCounters(dir, null).read().isEmpty());
    assertTrue(new DeviceCounters(fakeSys(dir), "rxe9").read().isEmpty());
  }

  @Test
  void shouldParseOnlyUnsignedDecimals() {
    assertEquals(0L, DeviceCounters.parse("0"));
    assertEquals(-1L, DeviceCounters.parse("18446744073709551615"));
    assertNull(DeviceCounters.parse("18446744073709551616"));
    assertNull(DeviceCounters.parse("-1"));
    assertNull(DeviceCounters.parse("0x10"));
    assertNull(DeviceCounters.parse(""));
    assertNull(DeviceCounters.parse("N/A (no PMA)"));
  }
}
