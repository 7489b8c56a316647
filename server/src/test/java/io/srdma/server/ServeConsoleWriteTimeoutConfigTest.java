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
 * {@code console.response-write-timeout}: optional, a duration from 100ms to 1h, 60s by default,
 * and handed to the console ({@link ConsoleConfig#responseWriteTimeout}); anything else is refused
 * naming the key and its position.
 */
class ServeConsoleWriteTimeoutConfigTest {
  private static final String HEAD =
      "version: 1\nlisten: 127.0.0.1:7471\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n"
          + "console:\n"
          + "  listen: 127.0.0.1:0\n"
          + "  certificate-chain: console/chain.pem\n"
          + "  key: console/console.key\n";

  @TempDir Path dir;

  private Path write(String text) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, text, StandardCharsets.UTF_8);
    return f;
  }

  private ServeConfig read(String timeoutLine) throws Exception {
    return ServeConfig.read(write(HEAD + timeoutLine));
  }

  @Test
  void shouldDefaultToTheConsolesDefaultAndReadOneInRange() throws Exception {
    assertEquals(
        ConsoleConfig.RESPONSE_WRITE_TIMEOUT_DEFAULT, read("").consoleResponseWriteTimeout);
    assertEquals(
        Duration.ofSeconds(5), read("  response-write-timeout: 5s\n").consoleResponseWriteTimeout);
    assertEquals(
        Duration.ofMillis(100),
        read("  response-write-timeout: 100ms\n").consoleResponseWriteTimeout);
    assertEquals(
        Duration.ofHours(1), read("  response-write-timeout: 1h\n").consoleResponseWriteTimeout);
  }

  @Test
  void shouldRefuseATimeoutOutOfRangeOrNotADurationNamingTheKey() throws Exception {
    String[][] cases = {
      {"99ms", "must be from 100ms to 1h, got '99ms'"},
      {"61m", "must be from 100ms to 1h, got '61m'"},
      {"2d", "must be at most 1d, got '2d'"},
      {"forever", "must be a positive duration"},
      {"0s", "must be a positive duration"},
      {"\"5s\"", "written without quotes"},
    };
    for (String[] c : cases) {
      ServeConfig.ConfigException e =
          assertThrows(
              ServeConfig.ConfigException.class,
              () -> read("  response-write-timeout: " + c[0] + "\n"),
              c[0]);
      assertEquals(1, e.errors().size(), e.errors().toString());
      String want = dir.resolve("serve.yaml") + ":10:27: console.response-write-timeout: ";
      assertTrue(e.errors().get(0).startsWith(want), e.errors() + "\n  wanted " + want);
      assertTrue(e.errors().get(0).contains(c[1]), e.errors().toString());
    }
  }

  @Test
  void shouldHandTheTimeoutToTheConsole() throws Exception {
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
    ConsoleConfig config = ConsoleChecks.prepare(read("  response-write-timeout: 7s\n"), errors);
    assertEquals(List.of(), errors);
    assertNotNull(config);
    assertEquals(Duration.ofSeconds(7), config.responseWriteTimeout());
  }
}
