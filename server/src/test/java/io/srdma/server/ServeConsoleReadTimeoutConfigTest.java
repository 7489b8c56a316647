package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.srdma.console.ConsoleConfig;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code console.request-read-timeout}: optional, a duration from 100ms to 1h, 60s by default, and
 * handed to the console ({@link ConsoleConfig#requestReadTimeout}); anything else is refused naming
 * the key and its position.
 */
class ServeConsoleReadTimeoutConfigTest {
  @TempDir Path dir;

  private ServeConfig read(String line) throws Exception {
    return ServeConsoleConfigs.read(dir, line);
  }

  @Test
  void shouldDefaultToTheConsolesDefaultAndReadOneInRange() throws Exception {
    assertEquals(ConsoleConfig.REQUEST_READ_TIMEOUT_DEFAULT, read("").consoleRequestReadTimeout);
    assertEquals(
        Duration.ofSeconds(5), read("  request-read-timeout: 5s\n").consoleRequestReadTimeout);
    assertEquals(
        Duration.ofMillis(100), read("  request-read-timeout: 100ms\n").consoleRequestReadTimeout);
    assertEquals(
        Duration.ofHours(1), read("  request-read-timeout: 1h\n").consoleRequestReadTimeout);
  }

  @Test
  void shouldRefuseATimeoutOutOfRangeOrNotADurationNamingTheKey() {
    String[][] cases = {
      {"99ms", "must be from 100ms to 1h, got '99ms'"},
      {"61m", "must be from 100ms to 1h, got '61m'"},
      {"2d", "must be at most 1d, got '2d'"},
      {"forever", "must be a positive duration"},
      {"0s", "must be a positive duration"},
      {"\"5s\"", "written without quotes"},
    };
    ServeConsoleConfigs.assertRefused(dir, "request-read-timeout", 25, cases);
  }

  @Test
  void shouldHandTheTimeoutToTheConsole() throws Exception {
    ConsoleConfig config = ServeConsoleConfigs.prepared(dir, "  request-read-timeout: 7s\n");
    assertEquals(Duration.ofSeconds(7), config.requestReadTimeout());
  }
}
