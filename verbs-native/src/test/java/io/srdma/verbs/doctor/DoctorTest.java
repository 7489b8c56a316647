package io.srdma.verbs.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.DeviceAttributes;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DoctorTest {
  @TempDir Path dir;

  /** libibverbs as the fake says: loads, lists {@code names}, answers per port from a map. */
  private static VerbsProbe probe(List<String> names, Map<String, VerbsProbe.PortProbe> ports) {
    return new VerbsProbe() {
      @Override
      public String libraryFailure() {
        return null;
      }

      @Override
      public List<String> deviceNames() {
        return names;
      }

      @Override
      public String callBinding() {
        return "jffi, not downcalls: -Dsrdma.ibv.calls=jnr";
      }

      @Override
      public PortProbe probe(String device, int port, int gidIndex) {
        PortProbe p = ports.get(device + "/" + port + "/" + gidIndex);
        return p != null
            ? p
            : PortProbe.failed("not expected: " + device + "/" + port + "/" + gidIndex);
      }
    };
  }

  private static VerbsProbe.PortProbe ok(int mtu, boolean type2, boolean bounds) {
    return new VerbsProbe.PortProbe(
        mtu,
        new DeviceAttributes(1L << 31, 1024, 1024, 1024, 256, 4, 1024, type2, bounds, false),
        null);
  }

  private DoctorReport examine(FakeHost host, VerbsProbe probe) {
    return new Doctor(new Sysfs(host.sys), host.proc, List.of(host.lib), probe).examine();
  }

  /** A host with libibverbs (rdma-core 44) and Soft-RoCE rxe0 on lo, as the guest has it. */
  private FakeHost rxe0Host() {
    return new FakeHost(dir).libibverbs("libibverbs.so.1.14.44.0").rxe0OnLo();
  }

  /** Examines {@code host} with libibverbs listing rxe0 and its port 1 (GID 1) probing so. */
  private DoctorReport examineRxe0(FakeHost host, VerbsProbe.PortProbe port1) {
    return examine(host, probe(List.of("rxe0"), Map.of("rxe0/1/1", port1)));
  }

  /** A host with mlx5_0 port 1 active on eth0 at the standard Ethernet MTU, RoCE v2 at GID 1. */
  private FakeHost mlx5OnStandardMtu() {
    return new FakeHost(dir)
        .libibverbs("libibverbs.so.1.14.50.0")
        .netdev("eth0", 1500)
        .port("mlx5_0", 1, "Ethernet", "4: ACTIVE", "5: LinkUp")
        .gid("mlx5_0", 1, 1, "0000:0000:0000:0000:0000:ffff:c000:020a", "RoCE v2", "eth0");
  }

  /** Examines {@code host} with libibverbs listing mlx5_0 and its port 1 (GID 1) probing so. */
  private DoctorReport examineMlx5(FakeHost host, VerbsProbe.PortProbe port1) {
    return examine(host, probe(List.of("mlx5_0"), Map.of("mlx5_0/1/1", port1)));
  }

  private static String text(DoctorReport r) {
    StringWriter s = new StringWriter();
    r.print(new PrintWriter(s));
    return s.toString();
  }

  private static boolean has(DoctorReport r, Finding.Severity severity, String fragment) {
    return r.findings().stream()
        .anyMatch(f -> f.severity() == severity && (f.message() + f.fix()).contains(fragment));
  }

  @Test
  void shouldSaySoftOnlyAndExitZeroWithoutAnyRdma() {
    DoctorReport r = examine(new FakeHost(dir), null);
    String t = text(r);
    assertEquals(DoctorReport.EXIT_USABLE, r.exitCode(), t);
    assertTrue(t.contains("no RDMA device found and no libibverbs"), t);
    assertTrue(t.contains("soft provider"), t);
    assertTrue(t.contains("rdma link add rxe0 type rxe netdev eth0"), t);
    assertTrue(t.contains("libibverbs  not found"), t);
    assertTrue(t.contains("verdict: usable: soft provider only"), t);
    assertFalse(t.contains("verbs calls"), t);
  }

  @Test
  void shouldNameTheLibraryVersion() {
    FakeHost host = new FakeHost(dir).libibverbs("libibverbs.so.1.14.44.0");
    String t = text(examine(host, probe(List.of(), Map.of())));
    assertTrue(t.contains("libibverbs.so.1.14.44.0 (rdma-core 44)"), t);
    assertTrue(t.contains("lists 0 device(s)"), t);
    assertTrue(
        t.contains(
            "verbs calls jffi, not downcalls: -Dsrdma.ibv.calls=jnr (post_send, post_recv,"
                + " poll_cq)"),
        t);
    assertTrue(t.contains("no RDMA device found: the soft provider"), t);
  }

  @Test
  void shouldReportRxeOnLoopbackAsTheGuestSeesIt() {
    DoctorReport r = examineRxe0(rxe0Host(), ok(4096, true, false));
    String t = text(r);
    assertEquals(DoctorReport.EXIT_USABLE, r.exitCode(), t);
    assertTrue(t.contains("device rxe0  provider rdma_rxe (Soft-RoCE)"), t);
    assertTrue(t.contains("link layer Ethernet, state ACTIVE (LinkUp), netdev lo MTU 65536"), t);
    assertTrue(t.contains("GID 1 0000:0000:0000:0000:0000:ffff:7f00:0001  RoCE v2 (lo)"), t);
    assertTrue(t.contains("RoCE v2 GIDs: 0, 1, 2"), t);
    assertTrue(t.contains("active MTU 4096, memoryWindowType2=true windowBoundsEnforced=false"), t);
    assertTrue(has(r, Finding.Severity.NOTE, "window bounds are not enforced"), t);
    assertEquals(1, r.findings().size(), t);
    assertTrue(t.contains("verdict: usable: ibv on rxe0 port 1"), t);
  }

  @Test
  void shouldFlagAnActiveMtuBelowWhatTheNetdevAllows() {
    DoctorReport r = examineRxe0(rxe0Host(), ok(1024, true, false));
    String t = text(r);
    assertEquals(DoctorReport.EXIT_USABLE, r.exitCode(), t);
    assertTrue(has(r, Finding.Severity.WARN, "MTU mismatch: active MTU 1024"), t);
    assertTrue(has(r, Finding.Severity.WARN, "rdma link add rxe0 type rxe netdev lo"), t);
  }

  @Test
  void shouldFlagAnActiveMtuTheNetdevCannotCarry() {
    DoctorReport r = examineMlx5(mlx5OnStandardMtu(), ok(4096, true, true));
    String t = text(r);
    assertEquals(DoctorReport.EXIT_MISCONFIGURED, r.exitCode(), t);
    assertTrue(has(r, Finding.Severity.ERROR, "eth0's MTU 1500 carries at most 1024"), t);
    assertTrue(has(r, Finding.Severity.ERROR, "ip link set eth0 mtu 4200"), t);
    assertTrue(t.contains("MISCONFIGURED"), t);
  }

  @Test
  void shouldNoteAStandardMtuThatLimitsRdmaTo1024() {
    DoctorReport r = examineMlx5(mlx5OnStandardMtu(), ok(1024, true, true));
    assertEquals(DoctorReport.EXIT_USABLE, r.exitCode(), text(r));
    assertTrue(has(r, Finding.Severity.NOTE, "ip link set eth0 mtu 4200"), text(r));
  }

  @Test
  void shouldFlagADownPortWithTheCommandThatBringsItUp() {
    FakeHost host =
        new FakeHost(dir)
            .libibverbs("libibverbs.so.1.14.44.0")
            .netdev("eth1", 9000)
            .port("rxe1", 1, "Ethernet", "1: DOWN", "3: Disabled")
            .gid("rxe1", 1, 1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "eth1");
    DoctorReport r = examine(host, probe(List.of("rxe1"), Map.of()));
    String t = text(r);
    assertEquals(DoctorReport.EXIT_MISCONFIGURED, r.exitCode(), t);
    assertTrue(has(r, Finding.Severity.ERROR, "port is DOWN, not ACTIVE"), t);
    assertTrue(has(r, Finding.Severity.ERROR, "ip link set eth1 up"), t);
    assertTrue(t.contains("ibv probe: skipped (port unusable)"), t);
  }

  @Test
  void shouldFlagAnEthernetPortWithoutRoceV2Gid() {
    FakeHost host =
        new FakeHost(dir)
            .libibverbs("libibverbs.so.1.14.44.0")
            .netdev("eth0", 1500)
            .port("rxe0", 1, "Ethernet", "4: ACTIVE", "5: LinkUp")
            .gid("rxe0", 1, 0, "fe80:0000:0000:0000:0000:00ff:fe00:0000", "IB/RoCE v1", "eth0");
    DoctorReport r = examine(host, probe(List.of("rxe0"), Map.of()));
    assertEquals(DoctorReport.EXIT_MISCONFIGURED, r.exitCode(), text(r));
    assertTrue(has(r, Finding.Severity.ERROR, "no RoCE v2 GID"), text(r));
    assertTrue(has(r, Finding.Severity.ERROR, "ip addr add <address>/<prefix> dev eth0"), text(r));
  }

  @Test
  void shouldPointAtTheRoceV2GidWhenTheDefaultIndexIsNotOne() {
    FakeHost host =
        new FakeHost(dir)
            .libibverbs("libibverbs.so.1.14.44.0")
            .netdev("eth0", 9000)
            .port("mlx5_0", 1, "Ethernet", "4: ACTIVE", "5: LinkUp")
            .gid("mlx5_0", 1, 1, "fe80:0000:0000:0000:0000:00ff:fe00:0001", "IB/RoCE v1", "eth0")
            .gid("mlx5_0", 1, 3, "0000:0000:0000:0000:0000:ffff:0a00:0002", "RoCE v2", "eth0");
    DoctorReport r =
        examine(host, probe(List.of("mlx5_0"), Map.of("mlx5_0/1/3", ok(4096, true, true))));
    assertEquals(DoctorReport.EXIT_USABLE, r.exitCode(), text(r));
    assertTrue(has(r, Finding.Severity.WARN, "-Dsrdma.ibv.gidIndex=3"), text(r));
    assertTrue(text(r).contains("windowBoundsEnforced=true"), text(r));
  }

  @Test
  void shouldFlagALowMemlockWhenADeviceIsPresent() {
    DoctorReport r = examineRxe0(rxe0Host().memlock("65536", "0"), ok(4096, true, false));
    String t = text(r);
    assertEquals(DoctorReport.EXIT_MISCONFIGURED, r.exitCode(), t);
    assertTrue(t.contains("memlock     64 KiB (ulimit -l 64)"), t);
    assertTrue(has(r, Finding.Severity.ERROR, "ulimit -l unlimited"), t);
    assertTrue(has(r, Finding.Severity.ERROR, "limits.conf"), t);
  }

  @Test
  void shouldAcceptALowMemlockWithCapIpcLock() {
    DoctorReport r =
        examineRxe0(rxe0Host().memlock("65536", "000001ffffffffff"), ok(1024, true, false));
    assertEquals(DoctorReport.EXIT_USABLE, r.exitCode(), text(r));
    assertTrue(text(r).contains("CAP_IPC_LOCK yes"), text(r));
  }

  @Test
  void shouldFlagADeviceLibibverbsDoesNotList() {
    DoctorReport r = examine(rxe0Host(), probe(List.of(), Map.of()));
    assertEquals(DoctorReport.EXIT_MISCONFIGURED, r.exitCode(), text(r));
    assertTrue(has(r, Finding.Severity.ERROR, "apt-get install ibverbs-providers"), text(r));
  }

  @Test
  void shouldFlagDevicesWithoutLibibverbs() {
    FakeHost host = new FakeHost(dir).rxe0OnLo();
    DoctorReport r = examine(host, null);
    assertEquals(DoctorReport.EXIT_MISCONFIGURED, r.exitCode(), text(r));
    assertTrue(has(r, Finding.Severity.ERROR, "libibverbs is not installed"), text(r));
  }

  @Test
  void shouldReportAProbeFailureAsAnError() {
    DoctorReport r = examine(rxe0Host(), probe(List.of("rxe0"), Map.of()));
    assertEquals(DoctorReport.EXIT_MISCONFIGURED, r.exitCode(), text(r));
    assertTrue(has(r, Finding.Severity.ERROR, "the ibv provider cannot use it"), text(r));
  }

  @Test
  void shouldWarnWithoutType2Windows() {
    DoctorReport r = examineRxe0(rxe0Host(), ok(4096, false, true));
    assertTrue(has(r, Finding.Severity.WARN, "no type-2 memory windows"), text(r));
    assertEquals(DoctorReport.EXIT_USABLE, r.exitCode(), text(r));
  }

  @Test
  void shouldMapNetdevMtuToRdmaMtu() {
    assertEquals(1024, Doctor.ibMtuFor(1500));
    assertEquals(4096, Doctor.ibMtuFor(4192));
    assertEquals(2048, Doctor.ibMtuFor(4191));
    assertEquals(4096, Doctor.ibMtuFor(65536));
    assertEquals(0, Doctor.ibMtuFor(300));
  }
}
