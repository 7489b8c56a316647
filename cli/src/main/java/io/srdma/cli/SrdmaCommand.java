package io.srdma.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
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
      GrantCommand.class,
      ClusterCommand.class
    })
public final class SrdmaCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Read from the parse result by {@link #execute}, on whichever command it was given. */
  @CommandLine.Option(
      names = ErrorReport.VERBOSE,
      scope = CommandLine.ScopeType.INHERIT,
      description =
          "Show log lines (INFO and above) on stderr; SRDMA_LOG_LEVEL=LEVEL shows that level.")
  boolean verbose;

  /** Read from the parse result by the error handlers, on whichever command it was given. */
  @CommandLine.Option(
      names = ErrorReport.DEBUG,
      scope = CommandLine.ScopeType.INHERIT,
      description = "On an error, show its Java details (stack trace) too; implies --verbose.")
  boolean debug;

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    System.exit(newCommandLine().execute(args));
  }

  /** A configured command line; tests call {@code execute} on it instead of {@link #main}. */
  public static CommandLine newCommandLine() {
    ErrorReport errors = new ErrorReport();
    CommandLine root =
        new CommandLine(new SrdmaCommand())
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setParameterExceptionHandler(errors)
            .setExecutionExceptionHandler(errors)
            .setExecutionStrategy(SrdmaCommand::execute)
            .setUsageHelpWidth(HELP_WIDTH);
    shareVersion(root, new Version());
    wholeSummaries(root);
    return root;
  }

  /**
   * The width help is laid out for. Fixed, not the terminal's: the descriptions' own line breaks
   * are made for it, so no line is wrapped mid-phrase by a narrower guess.
   */
  static final int HELP_WIDTH = 100;

  /** Every command list shows each subcommand's whole first paragraph, wrapped between words. */
  private static void wholeSummaries(CommandLine command) {
    command
        .getHelpSectionMap()
        .put(
            CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST, SrdmaCommand::commandList);
    for (CommandLine sub : command.getSubcommands().values()) {
      wholeSummaries(sub);
    }
  }

  /** The "Commands:" section: name, then the summary wrapped at word boundaries. */
  static String commandList(CommandLine.Help help) {
    java.util.Map<String, CommandLine.Help> subs = help.subcommands();
    int nameWidth = 0;
    for (String name : subs.keySet()) {
      nameWidth = Math.max(nameWidth, name.length());
    }
    int column = 2 + nameWidth + 2;
    int textWidth = Math.max(20, help.commandSpec().usageMessage().width() - column);
    StringBuilder b = new StringBuilder();
    for (java.util.Map.Entry<String, CommandLine.Help> e : subs.entrySet()) {
      if (e.getValue().commandSpec().usageMessage().hidden()) {
        continue;
      }
      List<String> lines = wrap(summary(e.getValue().commandSpec()), textWidth);
      for (int i = 0; i < lines.size(); i++) {
        String name = i == 0 ? e.getKey() : "";
        b.append("  ").append(name).append(" ".repeat(column - 2 - name.length()));
        b.append(lines.get(i)).append(System.lineSeparator());
      }
    }
    return b.toString();
  }

  /**
   * A command's summary: its header, else its description's lines up to the first that ends a
   * sentence (a description's first line may break mid-sentence; the summary never does).
   */
  static String summary(CommandLine.Model.CommandSpec spec) {
    String[] lines = spec.usageMessage().header();
    if (lines.length == 0) {
      lines = spec.usageMessage().description();
    }
    StringBuilder b = new StringBuilder();
    for (String line : lines) {
      if (line.isBlank()) {
        break;
      }
      b.append(b.length() == 0 ? "" : " ").append(line.strip());
      if (line.strip().endsWith(".")) {
        break;
      }
    }
    return b.toString().replace("%n", " ").replace("%%", "%");
  }

  /** {@code text} in lines of at most {@code width} characters, broken between words. */
  static List<String> wrap(String text, int width) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder();
    for (String word : text.split("\\s+")) {
      if (line.length() > 0 && line.length() + 1 + word.length() > width) {
        lines.add(line.toString());
        line.setLength(0);
      }
      line.append(line.length() == 0 ? "" : " ").append(word);
    }
    if (line.length() > 0 || lines.isEmpty()) {
      lines.add(line.toString());
    }
    return lines;
  }

  /** Sets what the terminal shows of the logs for this command, then runs it. */
  private static int execute(CommandLine.ParseResult parsed) {
    CliLogging.terminal(ErrorReport.verboseRequested(parsed) || ErrorReport.debugRequested(parsed));
    return new CommandLine.RunLast().execute(parsed);
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
