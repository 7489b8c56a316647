package io.srdma.verbs.doctor;

import io.srdma.verbs.ibv.IbvVerbsProbe;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * Runs the doctor without the {@code srdma} command (the Soft-RoCE guest has only this module's
 * class path): prints the report, exits with {@link DoctorReport#exitCode()}.
 */
public final class DoctorMain {
  private DoctorMain() {}

  /** Prints the report for this host. */
  public static void main(String[] args) {
    DoctorReport report = Doctor.forThisHost(new IbvVerbsProbe()).examine();
    report.print(
        new PrintWriter(new java.io.OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
    System.exit(report.exitCode());
  }
}
