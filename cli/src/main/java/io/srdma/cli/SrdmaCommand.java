package io.srdma.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
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
      ServeCommand.class,
      GrantCommand.class
    })
public final class SrdmaCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    System.exit(newCommandLine().execute(args));
  }

  /** A configured command line; tests call {@code execute} on it instead of {@link #main}. */
  public static CommandLine newCommandLine() {
    CommandLine root =
        new CommandLine(new SrdmaCommand()).setCaseInsensitiveEnumValuesAllowed(true);
    shareVersion(root, new Version());
    return root;
  }

  /** {@code srdma bench -V} prints the same as {@code srdma -V}, for every subcommand. */
  private static void shareVersion(CommandLine command, Version version) {
    command.getCommandSpec().versionProvider(version);
    for (CommandLine sub : command.getSubcommands().values()) {
      shareVersion(sub, version);
    }
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /**
   * {@code srdma -V}: the version and git commit this build was made from, e.g. {@code srdma
   * 0.1.0-SNAPSHOT (commit 0123456789ab)}, read from {@value #RESOURCE} (Maven fills it in; the
   * commit is {@code unknown} where the build had no git). Stateless and thread-safe.
   */
  static final class Version implements CommandLine.IVersionProvider {
    static final String RESOURCE = "/io/srdma/cli/version.properties";

    @Override
    public String[] getVersion() {
      Properties p = new Properties();
      try (InputStream in = SrdmaCommand.class.getResourceAsStream(RESOURCE)) {
        if (in != null) {
          p.load(in);
        }
      } catch (IOException e) {
        p.clear();
      }
      return new String[] {describe(p)};
    }

    /** {@code srdma VERSION (commit COMMIT)}, {@code unknown} for what the build did not fill. */
    static String describe(Properties p) {
      return "srdma "
          + filled(p.getProperty("version"))
          + " (commit "
          + filled(p.getProperty("commit"))
          + ")";
    }

    private static String filled(String value) {
      // an unfiltered placeholder (built outside Maven) or a value with odd characters is unknown
      return value == null || !value.matches("[0-9A-Za-z][0-9A-Za-z._+-]{0,63}")
          ? "unknown"
          : value;
    }
  }
}
