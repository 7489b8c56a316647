package io.srdma.cli;

import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import io.srdma.policy.PolicyException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code srdma audit}: check audit logs. */
@Command(
    name = "audit",
    mixinStandardHelpOptions = true,
    description = "Check hash-chained audit logs.",
    subcommands = {AuditCommand.Verify.class})
public final class AuditCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /** {@code srdma audit verify FILE...}: exit 0 if the chain is intact, 1 with the broken line. */
  @Command(
      name = "verify",
      mixinStandardHelpOptions = true,
      description = {
        "Verify the hash chain of audit log files (the active file and its rotated files, any"
            + " order).",
        "Exit 0 if intact; 1 with FILE:LINE: problem for the first broken line."
      })
  static final class Verify implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "Audit log files.")
    List<Path> files;

    @Option(
        names = "--head",
        paramLabel = "SHA256",
        description = "Head hash recorded elsewhere: detects lines cut from the end.")
    String head;

    @Override
    public Integer call() {
      CommandLine cmd = spec.commandLine();
      AuditVerification v;
      try {
        v = AuditVerifier.verify(files, head);
      } catch (PolicyException e) {
        cmd.getErr().println(e.getMessage());
        cmd.getErr().flush();
        return 1;
      }
      if (v.intact()) {
        cmd.getOut().println(v.summary());
        cmd.getOut().flush();
        return 0;
      }
      cmd.getErr().println(v.summary());
      cmd.getErr().flush();
      return 1;
    }
  }
}
