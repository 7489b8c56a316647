package io.srdma.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code srdma} command. Each subcommand is one class in this package; register it in {@code
 * subcommands} below.
 */
@Command(
    name = "srdma",
    mixinStandardHelpOptions = true,
    versionProvider = SrdmaCommand.Version.class,
    description =
        "Secure RDMA channels: demo, host (serve), attack suite, benchmarks, RDMA doctor,"
            + " certificates, policies and audit logs.",
    subcommands = {
      CommandLine.HelpCommand.class,
      PolicyCommand.class,
      AuditCommand.class,
      VerbsExampleCommand.class,
      DemoCommand.class,
      AttackSuiteCommand.class,
      io.srdma.cli.bench.BenchCommand.class,
      DoctorCommand.class,
      CaCommand.class,
      CertCommand.class,
      ServeCommand.class
    })
public final class SrdmaCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    System.exit(newCommandLine().execute(args));
  }

  /** A configured command line; tests call {@code execute} on it instead of {@link #main}. */
  public static CommandLine newCommandLine() {
    return new CommandLine(new SrdmaCommand()).setCaseInsensitiveEnumValuesAllowed(true);
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /** Reads the version from the jar manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = SrdmaCommand.class.getPackage().getImplementationVersion();
      return new String[] {"srdma " + (v == null ? "dev" : v)};
    }
  }
}
