package io.srdma.cli;

import io.srdma.channel.record.AeadException;
import io.srdma.channel.record.AeadRates;
import io.srdma.channel.record.AeadSelection;
import io.srdma.verbs.doctor.Doctor;
import io.srdma.verbs.doctor.DoctorReport;
import io.srdma.verbs.doctor.Libibverbs;
import io.srdma.verbs.doctor.Sysfs;
import io.srdma.verbs.ibv.IbvVerbsProbe;
import java.io.PrintWriter;
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
      "Also the data path's AES-256-GCM: the provider auto picks here (or srdma.aead /",
      "SRDMA_AEAD force), why, and each candidate's seal/open rates from the start-up check.",
      "",
      "Exit status: 0 = usable as it is (also when no RDMA device exists and the soft provider is",
      "the only choice); 1 = an RDMA device, libibverbs or memlock is misconfigured, or a forced",
      "AEAD provider is unavailable; 2 = usage."
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
    PrintWriter out = spec.commandLine().getOut();
    report.print(out);
    boolean aeadOk = printAead(out);
    out.flush();
    return aeadOk ? report.exitCode() : Math.max(1, report.exitCode());
  }

  /** The data-path AEAD line; false when a forced provider cannot be had. */
  static boolean printAead(PrintWriter out) {
    AeadSelection.Choice c;
    try {
      c = AeadSelection.current();
    } catch (AeadException e) {
      out.println();
      out.println("data-path AEAD: ERROR: " + e.getMessage());
      out.println(
          "  fix: unset "
              + AeadSelection.PROPERTY
              + " / "
              + AeadSelection.ENV
              + ", or set it to auto or jdk");
      return false;
    }
    out.println();
    out.printf("data-path AEAD: %s, %s%n", c.plan().description(), c.reason());
    for (AeadRates r : c.rates()) {
      out.printf("  %-7s %s%n", r.provider(), r);
    }
    if (c.accpUnavailable() != null) {
      out.println("  accp unavailable: " + c.accpUnavailable());
    }
    if (c.opensslUnavailable() != null) {
      out.println("  openssl unavailable: " + c.opensslUnavailable());
    }
    if (c.gcryptUnavailable() != null) {
      out.println("  gcrypt unavailable: " + c.gcryptUnavailable());
    }
    if (c.ipsecMbUnavailable() != null) {
      out.println("  ipsec-mb unavailable: " + c.ipsecMbUnavailable());
    }
    return true;
  }
}
