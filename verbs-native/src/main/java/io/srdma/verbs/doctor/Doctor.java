package io.srdma.verbs.doctor;

import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Examines this host's RDMA setup: each device and port from sysfs, libibverbs, the locked-memory
 * limit and, through a {@link VerbsProbe}, what the {@code ibv} provider finds when it opens each
 * port (active MTU, type-2 windows, the window-bounds self-test). Every problem comes with the
 * command that fixes it. {@code srdma doctor} prints the result; the Soft-RoCE guest runs it too.
 *
 * <p>Exit status ({@link DoctorReport#exitCode()}): 0 when the host can run secure-rdma as it is,
 * including "no RDMA here, the soft provider is the only choice"; 1 when an RDMA device is present
 * but misconfigured (port down, no RoCE v2 GID, MTU larger than the network carries, libibverbs or
 * its driver missing, memlock too low).
 */
public final class Doctor {
  /** Bytes of RoCE v2 headers inside the netdev MTU (the kernel's {@code iboe_get_mtu}). */
  static final int ROCE_OVERHEAD = 96;

  private final Sysfs sysfs;
  private final Path proc;
  private final List<Path> libDirs;
  private final VerbsProbe probe;
  private final int defaultGidIndex;

  /**
   * A doctor over the given sources.
   *
   * @param sysfs where devices are read
   * @param proc the procfs root for the memlock limit, normally {@code /proc}
   * @param libDirs where libibverbs is looked for ({@link Libibverbs#DEFAULT_DIRS})
   * @param probe libibverbs itself, or null to report sysfs facts only
   */
  public Doctor(Sysfs sysfs, Path proc, List<Path> libDirs, VerbsProbe probe) {
    this.sysfs = sysfs;
    this.proc = proc;
    this.libDirs = List.copyOf(libDirs);
    this.probe = probe;
    this.defaultGidIndex = new DeviceOptions().gidIndex();
  }

  /** The doctor for this host: {@code /sys}, {@code /proc}, the usual library folders. */
  public static Doctor forThisHost(VerbsProbe probe) {
    return new Doctor(new Sysfs(Path.of("/sys")), Path.of("/proc"), Libibverbs.DEFAULT_DIRS, probe);
  }

  /** Looks at everything once and returns the report. */
  public DoctorReport examine() {
    List<String> facts = new ArrayList<>();
    List<Finding> findings = new ArrayList<>();
    List<String> usable = new ArrayList<>();

    Libibverbs lib = Libibverbs.find(libDirs);
    String loadFailure = probe == null ? null : probe.libraryFailure();
    List<String> listed = probe != null && loadFailure == null ? probe.deviceNames() : List.of();
    facts.add("libibverbs  " + describe(lib, loadFailure, listed));

    Memlock memlock = Memlock.read(proc);
    facts.add(
        "memlock     "
            + memlock.describe()
            + (memlock.softLimitBytes() >= 0 && memlock.softLimitBytes() != Long.MAX_VALUE
                ? " (ulimit -l " + (memlock.softLimitBytes() >> 10) + ")"
                : "")
            + ", CAP_IPC_LOCK "
            + (memlock.capIpcLock() ? "yes (the limit does not apply)" : "no"));

    List<DeviceFacts> devices = sysfs.devices();
    Path ibDir = sysfs.root().resolve("class/infiniband");
    if (devices.isEmpty()) {
      facts.add("devices     none in " + ibDir);
      findings.add(
          new Finding(
              Finding.Severity.NOTE,
              "rdma",
              "no RDMA device found"
                  + (lib.found() ? "" : " and no libibverbs")
                  + ": the soft provider (RDMA semantics over TCP) is the only choice here; it is"
                  + " the default, and --provider auto falls back to it",
              "to use real verbs: a NIC with its driver (mlx5_ib, irdma, bnxt_re ...), or"
                  + " Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0"
                  + (lib.found() ? "" : "; apt-get install rdma-core ibverbs-providers")));
      if (memlock.tooLow()) {
        findings.add(
            new Finding(
                Finding.Severity.NOTE,
                "memlock",
                "locked-memory limit "
                    + memlock.describe()
                    + " would be too low for the ibv provider (the soft provider pins nothing)",
                memlockFix()));
      }
      return report(facts, loadFailure, findings, usable);
    }

    if (!lib.found() || loadFailure != null) {
      findings.add(
          Finding.error(
              "libibverbs",
              "the kernel has RDMA devices but libibverbs "
                  + (loadFailure != null ? "cannot be used: " + loadFailure : "is not installed"),
              "apt-get install libibverbs1 ibverbs-providers   (dnf install rdma-core"
                  + " libibverbs)"));
    }
    if (memlock.tooLow()) {
      findings.add(
          Finding.error(
              "memlock",
              "locked-memory limit "
                  + memlock.describe()
                  + " is below "
                  + (Memlock.MIN_BYTES >> 20)
                  + " MiB: registering memory regions (ibv_reg_mr) pins pages and will fail with"
                  + " ENOMEM",
              memlockFix()));
    }
    for (DeviceFacts dev : devices) {
      facts.add("device " + dev.name() + "  provider " + dev.provider());
      boolean seen = probe == null || loadFailure != null || listed.contains(dev.name());
      if (!seen) {
        findings.add(
            Finding.error(
                dev.name(),
                "the kernel has it but libibverbs does not list it: the user-space driver for "
                    + dev.provider()
                    + " is missing",
                "apt-get install ibverbs-providers   (then 'ibv_devices' lists it)"));
      }
      if (dev.ports().isEmpty()) {
        findings.add(Finding.error(dev.name(), "no ports in sysfs", ""));
      }
      for (PortFacts port : dev.ports()) {
        examinePort(dev, port, seen && probe != null && loadFailure == null, facts, findings)
            .ifPresent(usable::add);
      }
    }
    return report(facts, loadFailure, findings, usable);
  }

  private java.util.Optional<String> examinePort(
      DeviceFacts dev,
      PortFacts port,
      boolean probeIt,
      List<String> facts,
      List<Finding> findings) {
    String subject = dev.name() + " port " + port.number();
    String nd = port.netdev().isEmpty() ? "<netdev>" : port.netdev();
    facts.add(
        "  port "
            + port.number()
            + ": link layer "
            + orUnknown(port.linkLayer())
            + ", state "
            + orUnknown(port.state())
            + (port.physState().isEmpty() ? "" : " (" + port.physState() + ")")
            + ", netdev "
            + (port.netdev().isEmpty()
                ? "none"
                : port.netdev() + " MTU " + (port.netdevMtu() < 0 ? "unknown" : port.netdevMtu())));
    for (GidEntry g : port.gids()) {
      facts.add(
          "    GID "
              + g.index()
              + " "
              + g.gid()
              + "  "
              + (g.type().isEmpty() ? "type unknown" : g.type())
              + (g.netdev().isEmpty() ? "" : " (" + g.netdev() + ")"));
    }
    boolean ok = true;
    if (!port.active()) {
      ok = false;
      findings.add(
          Finding.error(
              subject,
              "port is " + orUnknown(port.state()) + ", not ACTIVE",
              port.ethernet()
                  ? "ip link set " + nd + " up"
                  : "check the cable and that a subnet manager runs (systemctl start opensm)"));
    }
    if (port.ethernet() && port.netdev().isEmpty()) {
      findings.add(
          Finding.warn(
              subject,
              "no network interface behind this Ethernet port (was it removed?)",
              dev.provider().startsWith("rdma_rxe")
                  ? "rdma link delete "
                      + dev.name()
                      + "; rdma link add "
                      + dev.name()
                      + " type rxe netdev eth0"
                  : "ip link show; rdma link show"));
    }
    List<GidEntry> v2 = port.roceV2Gids();
    int gidIndex = defaultGidIndex;
    if (port.ethernet()) {
      facts.add(
          "    RoCE v2 GIDs: "
              + (v2.isEmpty()
                  ? "none"
                  : String.join(", ", v2.stream().map(g -> String.valueOf(g.index())).toList())));
      if (v2.isEmpty()) {
        ok = false;
        findings.add(
            Finding.error(
                subject,
                "no RoCE v2 GID: the ibv provider addresses peers by a RoCE v2 (UDP/IP) GID, and"
                    + " the kernel makes one per IP address of the interface",
                "ip addr add <address>/<prefix> dev " + nd + "   (and ip link set " + nd + " up)"));
      } else if (v2.stream().noneMatch(g -> g.index() == defaultGidIndex)) {
        gidIndex = v2.get(0).index();
        findings.add(
            Finding.warn(
                subject,
                "GID index "
                    + defaultGidIndex
                    + " (the ibv provider's setting) is not a RoCE v2 entry; "
                    + gidIndex
                    + " is",
                "java -D" + DeviceOptions.GID_INDEX_PROP_NAME + "=" + gidIndex + " ..."));
      }
    }
    if (!probeIt || !ok) {
      facts.add(
          "    ibv probe: "
              + (probe == null
                  ? "not run (sysfs only)"
                  : !ok ? "skipped (port unusable)" : "skipped (libibverbs cannot use it)"));
      return ok && probe == null ? java.util.Optional.of(subject) : java.util.Optional.empty();
    }
    VerbsProbe.PortProbe result = probe.probe(dev.name(), port.number(), gidIndex);
    if (result.failure() != null || result.attributes() == null) {
      findings.add(
          Finding.error(
              subject,
              "the ibv provider cannot use it (GID index " + gidIndex + "): " + result.failure(),
              ""));
      facts.add("    ibv probe (GID index " + gidIndex + "): FAILED");
      return java.util.Optional.empty();
    }
    DeviceAttributes a = result.attributes();
    facts.add(
        "    ibv probe (GID index "
            + gidIndex
            + "): active MTU "
            + (result.activeMtuBytes() > 0 ? result.activeMtuBytes() : "unknown")
            + ", memoryWindowType2="
            + a.memoryWindowType2()
            + " windowBoundsEnforced="
            + a.windowBoundsEnforced());
    if (port.ethernet()) {
      checkMtu(dev, port, result.activeMtuBytes(), subject, findings);
    }
    if (!a.memoryWindowType2()) {
      findings.add(
          Finding.warn(
              subject,
              "no type-2 memory windows: grants are scoped by a memory region registered per grant"
                  + " (slower to grant and revoke)",
              ""));
    }
    if (!a.windowBoundsEnforced()) {
      findings.add(
          Finding.note(
              subject,
              "window bounds are not enforced (the self-test's WRITE outside a bound window got"
                  + " through; rxe does this): grants on this device are scoped by a memory region"
                  + " registered over exactly the granted range"));
    }
    return java.util.Optional.of(subject);
  }

  private static void checkMtu(
      DeviceFacts dev, PortFacts port, int active, String subject, List<Finding> findings) {
    if (active <= 0 || port.netdevMtu() < 0) {
      return;
    }
    int allowed = ibMtuFor(port.netdevMtu());
    String nd = port.netdev();
    if (active > allowed) {
      findings.add(
          Finding.error(
              subject,
              "MTU mismatch: active MTU "
                  + active
                  + " but "
                  + nd
                  + "'s MTU "
                  + port.netdevMtu()
                  + " carries at most "
                  + allowed
                  + " bytes of RDMA payload per packet: full-size packets will be dropped",
              "ip link set " + nd + " mtu " + netdevMtuFor(active)));
    } else if (active < allowed) {
      findings.add(
          Finding.warn(
              subject,
              "MTU mismatch: active MTU "
                  + active
                  + " while "
                  + nd
                  + "'s MTU "
                  + port.netdevMtu()
                  + " would allow "
                  + allowed
                  + "; peers must agree on the path MTU, larger packets are faster",
              dev.provider().startsWith("rdma_rxe")
                  ? "ibv_devinfo -d "
                      + dev.name()
                      + " | grep mtu; if it stays low, recreate the link: rdma link delete "
                      + dev.name()
                      + "; rdma link add "
                      + dev.name()
                      + " type rxe netdev "
                      + nd
                  : "ibv_devinfo -d " + dev.name() + " (check the peer's and the switch's MTU)"));
    } else if (allowed < 4096) {
      findings.add(
          new Finding(
              Finding.Severity.NOTE,
              subject,
              nd + "'s MTU " + port.netdevMtu() + " limits the RDMA MTU to " + allowed,
              "for 4096: ip link set "
                  + nd
                  + " mtu 4200   (on every host and switch on the path)"));
    }
  }

  /** The netdev MTU that carries {@code ibMtu}, rounded up to hundreds (4096 -> 4200). */
  static int netdevMtuFor(int ibMtu) {
    return (ibMtu + ROCE_OVERHEAD + 99) / 100 * 100;
  }

  /** The largest IB MTU that fits in a netdev MTU with RoCE v2 headers; 0 if none. */
  static int ibMtuFor(int netdevMtu) {
    int payload = netdevMtu - ROCE_OVERHEAD;
    for (int m = 4096; m >= 256; m >>= 1) {
      if (payload >= m) {
        return m;
      }
    }
    return 0;
  }

  /**
   * The report, with how the provider makes its per-message calls second: asked after the ports
   * were probed, so that a device whose ops could not be bound is counted.
   */
  private DoctorReport report(
      List<String> facts, String loadFailure, List<Finding> findings, List<String> usable) {
    if (probe != null && loadFailure == null) {
      facts.add(1, "verbs calls " + probe.callBinding() + " (post_send, post_recv, poll_cq)");
    }
    return new DoctorReport(facts, findings, usable);
  }

  private static String memlockFix() {
    return "ulimit -l unlimited (this shell), or in /etc/security/limits.conf: '* - memlock"
        + " unlimited', or LimitMEMLOCK=infinity in the systemd unit";
  }

  private static String describe(Libibverbs lib, String loadFailure, List<String> listed) {
    StringBuilder s = new StringBuilder();
    if (lib.found()) {
      s.append(lib.file());
      if (!lib.rdmaCoreRelease().isEmpty()) {
        s.append(" (rdma-core ").append(lib.rdmaCoreRelease()).append(')');
      }
      s.append(" in ").append(lib.directory());
    } else {
      s.append("not found");
    }
    if (loadFailure != null) {
      s.append("; cannot be loaded: ").append(loadFailure);
    } else if (lib.found() || !listed.isEmpty()) {
      s.append("; lists ")
          .append(listed.size())
          .append(" device(s)")
          .append(listed.isEmpty() ? "" : ": " + String.join(", ", listed));
    }
    return s.toString();
  }

  private static String orUnknown(String s) {
    return s.isEmpty() ? "unknown" : s;
  }
}
