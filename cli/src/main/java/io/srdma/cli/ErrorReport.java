package io.srdma.cli;

import io.srdma.policy.Printable;
import io.srdma.server.Addresses;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * How {@code srdma} reports what went wrong, in words for people: a usage error is one line and a
 * hint (exit 2), a failure one line with its cause in plain words (exit 1). No Java class name or
 * stack trace reaches the terminal unless {@code --debug} asks for it. Stateless and thread-safe.
 */
final class ErrorReport
    implements CommandLine.IParameterExceptionHandler, CommandLine.IExecutionExceptionHandler {
  /** Exit status of a failure. */
  static final int EXIT_FAILED = 1;

  /** Exit status of a usage error. */
  static final int EXIT_USAGE = 2;

  static final String DEBUG = "--debug";
  static final String VERBOSE = "--verbose";

  private static final Pattern ENUM_VALUES =
      Pattern.compile(
          "Invalid value for (option|positional parameter) '([^']+)'(?: \\([^)]*\\))?:"
              + " expected one of \\[([^\\]]*)\\](?: \\(case-insensitive\\))? but was '([^']*)'");
  private static final Pattern INVALID_VALUE =
      Pattern.compile(
          "Invalid value for (?:option|positional parameter) '([^']+)'(?: \\([^)]*\\))?:"
              + " (?:cannot convert )?'([^']*)'(?: to [A-Za-z.]+)?(?: \\(.*\\))?");
  private static final Pattern GROUP_SYNTAX = Pattern.compile("\\(?\\[?--?[\\w-]+=<[^>]+>");

  @Override
  public int handleParseException(ParameterException ex, String[] args) {
    CommandLine cmd = ex.getCommandLine();
    PrintWriter err = cmd.getErr();
    boolean debug = contains(args, DEBUG);
    err.println(name(cmd) + ": " + printable(usageMessage(ex)));
    String hint = hint(ex);
    if (hint != null) {
      err.println(hint);
    }
    err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for its options.");
    if (debug) {
      ex.printStackTrace(err);
    }
    err.flush();
    return EXIT_USAGE;
  }

  @Override
  public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parsed) {
    PrintWriter err = cmd.getErr();
    err.println(name(cmd) + ": " + printable(Addresses.explain(ex)));
    if (debugRequested(parsed)) {
      ex.printStackTrace(err);
    } else {
      err.println("(run again with --debug for the details)");
    }
    err.flush();
    return EXIT_FAILED;
  }

  /**
   * A message fit for a terminal: messages echo argument values as typed, so a control character in
   * one (ESC starting a terminal sequence, BEL) is escaped rather than printed; line breaks are
   * kept.
   */
  static String printable(String message) {
    String[] lines = message.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      lines[i] = Printable.escape(lines[i]);
    }
    return String.join("\n", lines);
  }

  /** Whether {@code --debug} was given anywhere on the command line. */
  static boolean debugRequested(ParseResult parsed) {
    return matched(parsed, DEBUG);
  }

  /** Whether {@code --verbose} was given anywhere on the command line. */
  static boolean verboseRequested(ParseResult parsed) {
    return matched(parsed, VERBOSE);
  }

  private static boolean matched(ParseResult parsed, String option) {
    for (ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.hasMatchedOption(option)) {
        return true;
      }
    }
    return false;
  }

  private static boolean contains(String[] args, String option) {
    for (String a : args) {
      if (a.equals(option)) {
        return true;
      }
    }
    return false;
  }

  /** {@code srdma ca init}: the command as typed. */
  private static String name(CommandLine cmd) {
    return cmd.getCommandSpec().qualifiedName(" ");
  }

  /** picocli's message with its internal syntax and Java names replaced by what a person typed. */
  static String usageMessage(ParameterException ex) {
    String m = ex.getMessage() == null ? "bad arguments" : ex.getMessage();
    if (ex instanceof CommandLine.OverwrittenOptionException o && o.getOverwritten() != null) {
      return optionName(o.getOverwritten()) + " given more than once";
    }
    if (ex instanceof CommandLine.MaxValuesExceededException
        && m.startsWith("Error: expected only one match but got")) {
      return "an option given more than once, or options that exclude each other: " + optionsIn(m);
    }
    if (ex instanceof CommandLine.MutuallyExclusiveArgsException) {
      return "options that exclude each other: " + optionsIn(m);
    }
    Matcher e = ENUM_VALUES.matcher(m);
    if (e.find()) {
      return e.group(2) + ": unknown value '" + e.group(4) + "'";
    }
    Matcher v = INVALID_VALUE.matcher(m);
    if (v.find()) {
      String why =
          ex.getCause() instanceof CommandLine.TypeConversionException t && t.getMessage() != null
              ? t.getMessage()
              : "";
      if (why.isEmpty() || why.matches("'.*' is not an? [a-z]+")) {
        why =
            why.matches("'.*' is not an? (int|long|short|byte)")
                ? "not a whole number: '" + v.group(2) + "'"
                : "not a valid value: '" + v.group(2) + "'";
      }
      return v.group(1) + ": " + Addresses.withoutClassNames(why);
    }
    if (ex instanceof CommandLine.UnmatchedArgumentException u
        && m.startsWith("Unmatched argument")) {
      String what = String.join(" ", u.getUnmatched());
      return (u.getCommandLine().getSubcommands().isEmpty()
              ? "unexpected argument '"
              : "unknown command '")
          + what
          + "'";
    }
    if (m.startsWith("Unknown option")) {
      return m.replaceFirst("^Unknown option: ", "unknown option ");
    }
    if (m.startsWith("Missing required")) {
      return "missing " + m.replaceFirst("^Missing required [^:]*: ", "").replace("'", "");
    }
    return Addresses.withoutClassNames(
        m.isEmpty() ? m : Character.toLowerCase(m.charAt(0)) + m.substring(1));
  }

  /** {@code did you mean ...?} for an unknown enum value, option or subcommand; else null. */
  static String hint(ParameterException ex) {
    String m = ex.getMessage() == null ? "" : ex.getMessage();
    Matcher e = ENUM_VALUES.matcher(m);
    if (e.find()) {
      List<String> values = new ArrayList<>();
      for (String value : e.group(3).split(",\\s*")) {
        values.add(value.toLowerCase(Locale.ROOT));
      }
      boolean several = ex.getArgSpec() != null && !ex.getArgSpec().splitRegex().isEmpty();
      String guess = several ? String.join(",", values) : closest(e.group(4), values);
      return "did you mean "
          + guess
          + "? (one of: "
          + String.join(", ", values)
          + (several ? "; several comma-separated" : "")
          + ")";
    }
    if (m.equals("missing subcommand")) {
      List<String> names = new ArrayList<>();
      for (var sub : ex.getCommandLine().getSubcommands().entrySet()) {
        if (!sub.getValue().getCommandSpec().usageMessage().hidden()) {
          names.add(sub.getKey());
        }
      }
      return "commands: " + String.join(", ", names);
    }
    if (ex instanceof CommandLine.UnmatchedArgumentException u) {
      List<String> suggestions = u.getSuggestions();
      if (!suggestions.isEmpty()) {
        return "did you mean " + String.join(" or ", suggestions) + "?";
      }
    }
    return null;
  }

  /** The option names mentioned in picocli's group syntax, each once. */
  private static String optionsIn(String message) {
    List<String> names = new ArrayList<>();
    Matcher m = Pattern.compile("(--?[A-Za-z][\\w-]*)").matcher(message);
    while (m.find()) {
      if (!names.contains(m.group(1))) {
        names.add(m.group(1));
      }
    }
    return names.isEmpty()
        ? GROUP_SYNTAX.matcher(message).replaceAll("")
        : String.join(", ", names);
  }

  private static String optionName(CommandLine.Model.ArgSpec arg) {
    if (arg instanceof OptionSpec o) {
      return o.longestName();
    }
    return arg.paramLabel();
  }

  /** The value nearest to what was typed (fewest edits), ties to the first. */
  static String closest(String typed, List<String> values) {
    String best = values.get(0);
    int bestDistance = Integer.MAX_VALUE;
    String t = typed.toLowerCase(Locale.ROOT);
    for (String v : values) {
      int d = distance(t, v);
      if (d < bestDistance) {
        best = v;
        bestDistance = d;
      }
    }
    return best;
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] swap = prev;
      prev = cur;
      cur = swap;
    }
    return prev[b.length()];
  }
}
