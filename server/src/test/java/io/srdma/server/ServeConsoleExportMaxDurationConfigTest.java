package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.srdma.console.ConsoleConfig;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code console.export-max-duration}: optional, a duration from 1s to 1d, 10m by default, and
 * handed to the console ({@link ConsoleConfig#exportMaxDuration}); anything else is refused naming
 * the key and its position.
 */
class ServeConsoleExportMaxDurationConfigTest {
  @TempDir Path dir;

  private ServeConfig read(String line) throws Exception {
    return ServeConsoleConfigs.read(dir, line);
  }

  @Test
  void shouldDefaultToTheConsolesDefaultAndReadOneInRange() throws Exception {
    assertEquals(Duration.ofMinutes(10), read("").consoleExportMaxDuration);
    assertEquals(
        Duration.ofMinutes(30), read("  export-max-duration: 30m\n").consoleExportMaxDuration);
    assertEquals(
        Duration.ofSeconds(1), read("  export-max-duration: 1s\n").consoleExportMaxDuration);
    assertEquals(Duration.ofDays(1), read("  export-max-duration: 1d\n").consoleExportMaxDuration);
  }

  @Test
  void shouldRefuseADurationOutOfRangeOrNotADurationNamingTheKey() {
    String[][] cases = {
      {"999ms", "must be from 1s to 1d, got '999ms'"},
      {"25h", "must be at most 1d, got '25h'"},
      {"forever", "must be a positive duration"},
      {"0s", "must be a positive duration"},
      {"\"10m\"", "written without quotes"},
    };
    ServeConsoleConfigs.assertRefused(dir, "export-max-duration", 24, cases);
  }

  @Test
  void shouldHandTheMaximumToTheConsole() throws Exception {
    ConsoleConfig config = ServeConsoleConfigs.prepared(dir, "  export-max-duration: 45m\n");
    assertEquals(Duration.ofMinutes(45), config.exportMaxDuration());
  }
}
