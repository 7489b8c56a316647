package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Help that reads well: whole summaries in every command list, nothing past the help width. */
class HelpTest {
  private static String squeezed(String text) {
    return text.replaceAll("\\s+", " ");
  }

  @Test
  void rootHelpShowsEveryCommandsSummaryWhole() {
    CliRun r = CliRun.of("--help");
    assertEquals(0, r.exit(), r.err());
    String help = squeezed(r.out());
    CommandLine root = SrdmaCommand.newCommandLine();
    for (Map.Entry<String, CommandLine> e : root.getSubcommands().entrySet()) {
      String summary = SrdmaCommand.summary(e.getValue().getCommandSpec());
      assertTrue(
          help.contains(e.getKey() + " " + squeezed(summary)), e.getKey() + " in\n" + r.out());
      // whole: a sentence, not a first line cut off mid-phrase
      assertTrue(summary.endsWith("."), e.getKey() + ": '" + summary + "'");
    }
    // doctor's first description line ends mid-phrase ("... state, active"); its summary does not
    assertTrue(help.contains("state, active MTU"), r.out());
  }

  /**
   * A description line longer than the help width is wrapped again by picocli, leaving a short
   * orphan mid-phrase ("... state, active" / "MTU against ..."): every command's own lines fit.
   */
  @Test
  void everyCommandsDescriptionLinesFitTheHelpWidth() {
    check(SrdmaCommand.newCommandLine(), "");
  }

  private static void check(CommandLine command, String prefix) {
    String name = (prefix + " " + command.getCommandName()).trim();
    CommandLine.Model.UsageMessageSpec usage = command.getCommandSpec().usageMessage();
    assertEquals(SrdmaCommand.HELP_WIDTH, usage.width(), name);
    for (String[] lines : new String[][] {usage.description(), usage.header()}) {
      for (int i = 0; i + 1 < lines.length; i++) {
        // a line broken by hand (the sentence goes on in the next line) must fit; a paragraph
        // ending its sentence may be longer: picocli wraps it between words
        boolean handBroken = !lines[i].strip().endsWith(".") && !lines[i + 1].isBlank();
        assertTrue(
            !handBroken || lines[i].length() <= SrdmaCommand.HELP_WIDTH,
            name + ": a hand-broken line wider than the help: " + lines[i]);
      }
    }
    for (CommandLine sub : command.getSubcommands().values()) {
      if (!sub.getCommandName().equals("help")) {
        check(sub, name);
      }
    }
  }

  @Test
  void wrapsBetweenWords() {
    assertEquals(java.util.List.of("one two", "three"), SrdmaCommand.wrap("one two three", 8));
    assertEquals(java.util.List.of("longerthanwidth"), SrdmaCommand.wrap("longerthanwidth", 4));
  }
}
