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

/**
 * The serve file of the console option tests ({@code ServeConsole*ConfigTest}): a minimal {@code
 * srdma serve} configuration with a console section, one option line appended to it (line 10).
 */
final class ServeConsoleConfigs {
  private static final String HEAD =
      "version: 1\nlisten: 127.0.0.1:7471\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n"
          + "console:\n"
          + "  listen: 127.0.0.1:0\n"
          + "  certificate-chain: console/chain.pem\n"
          + "  key: console/console.key\n";

  private ServeConsoleConfigs() {}

  /** Reads {@code dir/serve.yaml} written with {@code consoleLine} (empty: none) in the console. */
  static ServeConfig read(Path dir, String consoleLine) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, HEAD + consoleLine, StandardCharsets.UTF_8);
    return ServeConfig.read(f);
  }

  /**
   * Each {@code {value, wanted}} case of {@code key} is refused with one error at line 10, {@code
   * column}, naming the key and containing {@code wanted}.
   */
  static void assertRefused(Path dir, String key, int column, String[][] cases) {
    for (String[] c : cases) {
      ServeConfig.ConfigException e =
          assertThrows(
              ServeConfig.ConfigException.class,
              () -> read(dir, "  " + key + ": " + c[0] + "\n"),
              c[0]);
      assertEquals(1, e.errors().size(), e.errors().toString());
      String want = dir.resolve("serve.yaml") + ":10:" + column + ": console." + key + ": ";
      assertTrue(e.errors().get(0).startsWith(want), e.errors() + "\n  wanted " + want);
      assertTrue(e.errors().get(0).contains(c[1]), e.errors().toString());
    }
  }

  /**
   * The console's configuration as {@code srdma serve} prepares it from a file with {@code
   * consoleLine}, the console's credentials issued by a new CA under {@code dir}; no error.
   */
  static ConsoleConfig prepared(Path dir, String consoleLine) throws Exception {
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
    ConsoleConfig config = ConsoleChecks.prepare(read(dir, consoleLine), errors);
    assertEquals(List.of(), errors);
    assertNotNull(config);
    return config;
  }
}
