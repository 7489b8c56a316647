package io.srdma.verbs.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SysfsTest {
  @TempDir Path dir;

  @Test
  void shouldReadPortsGidsAndNetdevMtu() {
    FakeHost host = new FakeHost(dir).rxe0OnLo();
    List<DeviceFacts> devices = new Sysfs(host.sys).devices();
    assertEquals(1, devices.size());
    DeviceFacts rxe = devices.get(0);
    assertEquals("rxe0", rxe.name());
    assertEquals("rdma_rxe (Soft-RoCE)", rxe.provider());
    PortFacts port = rxe.ports().get(0);
    assertEquals(1, port.number());
    assertTrue(port.active());
    assertTrue(port.ethernet());
    assertEquals("LinkUp", port.physState());
    assertEquals("lo", port.netdev());
    assertEquals(65536, port.netdevMtu());
    assertEquals(3, port.gids().size(), "the all-zero GID 9 is skipped");
    assertEquals(1, port.roceV2Gids().get(1).index());
  }

  @Test
  void shouldFindNothingWithoutInfiniband() {
    assertTrue(new Sysfs(dir).devices().isEmpty());
  }

  @Test
  void shouldParseMemlockAndCapabilities() {
    assertEquals(
        65536L,
        Memlock.parseLimits(
            """
            Max cpu time    unlimited  unlimited  seconds
            Max locked memory         65536                65536                bytes
            """));
    assertEquals(
        Long.MAX_VALUE, Memlock.parseLimits("Max locked memory  unlimited unlimited bytes"));
    assertEquals(-1L, Memlock.parseLimits(""));
    assertTrue(Memlock.parseCapIpcLock("CapEff:\t000001ffffffffff\n"));
    assertFalse(Memlock.parseCapIpcLock("CapEff:\t0000000000000000\n"));
    assertTrue(new Memlock(8L << 20, false).tooLow());
    assertFalse(new Memlock(8L << 20, true).tooLow());
    assertFalse(new Memlock(Long.MAX_VALUE, false).tooLow());
    assertEquals("8 MiB", new Memlock(8L << 20, false).describe());
  }

  @Test
  void shouldReadTheLibraryVersionFromTheVersionedFile() {
    FakeHost host = new FakeHost(dir).libibverbs("libibverbs.so.1.14.44.0");
    Libibverbs lib = Libibverbs.find(List.of(dir.resolve("nowhere"), host.lib));
    assertTrue(lib.found());
    assertEquals("1.14.44.0", lib.version());
    assertEquals("44", lib.rdmaCoreRelease());
    assertFalse(Libibverbs.find(List.of(dir.resolve("nowhere"))).found());
  }

  @Test
  void shouldStripTheStateNumber() {
    assertEquals("ACTIVE", Sysfs.stateWord("4: ACTIVE"));
    assertEquals("DOWN", Sysfs.stateWord("DOWN"));
  }
}
