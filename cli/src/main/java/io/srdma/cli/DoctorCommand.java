package io.srdma.cli;

import io.srdma.verbs.doctor.Doctor;
import io.srdma.verbs.doctor.DoctorReport;
import io.srdma.verbs.doctor.Libibverbs;
import io.srdma.verbs.doctor.Sysfs;
import io.srdma.verbs.ibv.IbvVerbsProbe;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code srdma doctor}: reports this host's RDMA setup and the command that fixes each problem.
 * Exit 0 when the host can run secure-rdma as it is (soft provider only counts), 1 when a present
 * RDMA device, libibverbs or the memlock limit is misconfigured.
 */
@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    description = {
      "Checks this host's RDMA setup: each device and port (provider, link layer, state, active",
      "MTU against the network interface's MTU, RoCE v2 GIDs, type-2 windows and the window-bounds",
      "self-test), libibverbs and the memlock limit; prints the command that fixes each problem.",
      "",
      "Exit status: 0 = usable as it is (also when no RDMA device exists and the soft provider is",
      "the only choice); 1 = an RDMA device, libibverbs or memlock is misconfigured; 2 = usage."
    })
public final class DoctorCommand implements Callable<Integer> {
  @Option(
      names = "--sysfs",
      hidden = true,
      description = "Read devices below this folder instead of /sys; skips libibverbs (tests).")
  Path sysfs;

  @Option(
      names = "--proc",
      hidden = true,
      description = "Read the memlock limit below this folder instead of /proc (tests).")
  Path proc;

  @Option(
      names = "--lib-dir",
      hidden = true,
      description = "Look for libibverbs in this folder instead of the usual ones (tests).")
  Path libDir;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    Doctor doctor =
        new Doctor(
            new Sysfs(sysfs != null ? sysfs : Path.of("/sys")),
            proc != null ? proc : Path.of("/proc"),
            libDir != null ? List.of(libDir) : Libibverbs.DEFAULT_DIRS,
            sysfs != null ? null : new IbvVerbsProbe());
    DoctorReport report = doctor.examine();
    report.print(spec.commandLine().getOut());
    return report.exitCode();
  }
}
