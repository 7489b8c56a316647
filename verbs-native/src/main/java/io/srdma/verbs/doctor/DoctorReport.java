package io.srdma.verbs.doctor;

import java.io.PrintWriter;
import java.util.List;

/**
 * What {@link Doctor#examine()} found: facts to print, findings with fixes, and the ports the
 * {@code ibv} provider can use.
 *
 * @param facts lines describing the setup
 * @param findings problems and notes, in the order found
 * @param usablePorts {@code "<device> port <n>"} for each port that passed every check
 */
public record DoctorReport(List<String> facts, List<Finding> findings, List<String> usablePorts) {
  /** Exit status when the host can run secure-rdma as it is (soft-only included). */
  public static final int EXIT_USABLE = 0;

  /** Exit status when a present RDMA device, libibverbs or the memlock limit is misconfigured. */
  public static final int EXIT_MISCONFIGURED = 1;

  /** Copies the lists. */
  public DoctorReport {
    facts = List.copyOf(facts);
    findings = List.copyOf(findings);
    usablePorts = List.copyOf(usablePorts);
  }

  /** The number of {@link Finding.Severity#ERROR} findings. */
  public long errors() {
    return findings.stream().filter(f -> f.severity() == Finding.Severity.ERROR).count();
  }

  /** {@link #EXIT_MISCONFIGURED} when there is an error, else {@link #EXIT_USABLE}. */
  public int exitCode() {
    return errors() > 0 ? EXIT_MISCONFIGURED : EXIT_USABLE;
  }

  /** The one-line verdict. */
  public String verdict() {
    if (errors() > 0) {
      return "MISCONFIGURED: "
          + errors()
          + " error(s) above; the soft provider still works"
          + (usablePorts.isEmpty() ? "" : ", ibv works on " + String.join(", ", usablePorts));
    }
    if (usablePorts.isEmpty()) {
      return "usable: soft provider only (no RDMA device found)";
    }
    return "usable: ibv on " + String.join(", ", usablePorts) + "; soft everywhere";
  }

  /** Prints facts, findings with their fixes, and the verdict. */
  public void print(PrintWriter out) {
    out.println("srdma doctor: RDMA setup of this host");
    facts.forEach(out::println);
    out.println("findings:" + (findings.isEmpty() ? " none" : ""));
    for (Finding f : findings) {
      out.printf("  %-5s %s: %s%n", f.severity(), f.subject(), f.message());
      if (!f.fix().isEmpty()) {
        out.println("        fix: " + f.fix());
      }
    }
    out.println("verdict: " + verdict());
    out.flush();
  }
}
