package io.srdma.cli.bench;

import io.srdma.bench.transport.CpuSplit;
import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CpuAffinity;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.VerbsException;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** {@code --writer-cpus} and {@code --receiver-cpus}: parsed and checked against this machine. */
final class CpuSplitOption {
  private CpuSplitOption() {}

  /**
   * The split the two options ask for ({@link CpuSplit#NONE} when neither is given).
   *
   * @throws ParameterException naming the option: not a CPU list, CPU affinity unsupported here, or
   *     a CPU this process may not run on
   */
  static CpuSplit parse(CommandLine cl, String writerText, String receiverText) {
    if (writerText == null && receiverText == null) {
      return CpuSplit.NONE;
    }
    if (!CpuAffinity.supported()) {
      throw new ParameterException(
          cl, "--writer-cpus and --receiver-cpus need 64-bit Linux (CPU affinity)");
    }
    CpuSet allowed;
    try {
      allowed = CpuAffinity.current();
    } catch (VerbsException e) {
      throw new ParameterException(cl, "cannot read this process's CPUs: " + e.getMessage());
    }
    return new CpuSplit(
        one(cl, "--writer-cpus", writerText, allowed),
        one(cl, "--receiver-cpus", receiverText, allowed));
  }

  /**
   * {@code --receive-progress}: poller or device.
   *
   * @throws ParameterException naming the option and the values it takes
   */
  static CompletionProgress progress(CommandLine cl, String text) {
    if ("poller".equalsIgnoreCase(text)) {
      return CompletionProgress.POLLER;
    }
    if ("device".equalsIgnoreCase(text)) {
      return CompletionProgress.DEVICE;
    }
    throw new ParameterException(
        cl, "--receive-progress: '" + text + "' is neither poller nor device");
  }

  private static CpuSet one(CommandLine cl, String option, String text, CpuSet allowed) {
    if (text == null) {
      return null;
    }
    CpuSet set;
    try {
      set = CpuSet.parse(text);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, option + ": " + e.getMessage());
    }
    for (int cpu : set.toArray()) {
      if (!allowed.contains(cpu)) {
        throw new ParameterException(
            cl,
            option
                + " "
                + set
                + ": CPU "
                + cpu
                + " is not one this process may run on ("
                + allowed
                + ")");
      }
    }
    return set;
  }
}
