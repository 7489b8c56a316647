package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.console.ConsoleConfig;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.Pem;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code console.export-max-duration}: optional, a duration from 1s to 1d, 10m by default, and
 * handed to the console ({@link ConsoleConfig#exportMaxDuration}); anything else is refused naming
 * the key and its position.
 */
class ServeConsoleExportMaxDurationConfigTest {
  private static final String HEAD =
      "version: 1\nlisten: 127.0.0.1:7471\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n"
          + "console:\n"
          + "  listen: 127.0.0.1:0\n"
          + "  certificate-chain: console/chain.pem\n"
          + "  key: console/console.key\n";

  @TempDir Path dir;

  private ServeConfig read(String line) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, HEAD + line, StandardCharsets.UTF_8);
    return ServeConfig.read(f);
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
  void shouldRefuseADurationOutOfRangeOrNotADurationNamingTheKey() throws Exception {
    String[][] cases = {
      {"999ms", "must be from 1s to 1d, got '999ms'"},
      {"25h", "must be at most 1d, got '25h'"},
      {"forever", "must be a positive duration"},
      {"0s", "must be a positive duration"},
      {"\"10m\"", "written without quotes"},
    };
    for (String[] c : cases) {
      ServeConfig.ConfigException e =
          assertThrows(
              ServeConfig.ConfigException.class,
              () -> read("  export-max-duration: " + c[0] + "\n"),
              c[0]);
      assertEquals(1, e.errors().size(), e.errors().toString());
      String want = dir.resolve("serve.yaml") + ":10:24: console.export-max-duration: ";
      assertTrue(e.errors().get(0).startsWith(want), e.errors() + "\n  wanted " + want);
      assertTrue(e.errors().get(0).contains(c[1]), e.errors().toString());
    }
  }

  @Test
  void shouldHandTheMaximumToTheConsole() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    Path d = Files.createDirectories(dir.resolve("console"));
    Credential server = ca.issueServer(List.of("127.0.0.1"), Duration.ofDays(1));
    server.writeTo(d.resolve("console.crt"), d.resolve("console.key"), null);
    Files.writeString(
        d.resolve("chain.pem"),
        Files.readString(d.resolve("console.crt"), StandardCharsets.UTF_8)
            + Pem.toPem(ca.certificate()),
        StandardCharsets.UTF_8);
    List<String> errors = new ArrayList<>();
    ConsoleConfig config = ConsoleChecks.prepare(read("  export-max-duration: 45m\n"), errors);
    assertEquals(List.of(), errors);
    assertNotNull(config);
    assertEquals(Duration.ofMinutes(45), config.exportMaxDuration());
  }
}
