package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The serve configuration reader. The broken corpus ({@code serve-broken/}) holds one file per
 * rule; each file lists, in {@code # expect:} lines, exactly the errors it must produce ({@code
 * :line:column: key: message}, after the file name).
 */
class ServeConfigTest {
  private static final String EXPECT = "# expect: ";

  @TempDir Path dir;

  static Stream<Path> brokenFiles() throws Exception {
    Path corpus = corpus();
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.list(corpus)) {
      s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(files::add);
    }
    assertTrue(files.size() >= 15, "corpus too small: " + files);
    return files.stream();
  }

  private static Path corpus() throws URISyntaxException {
    return Path.of(ServeConfigTest.class.getResource("serve-broken").toURI());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("brokenFiles")
  void everyBrokenFileGivesExactlyItsErrors(Path file) throws Exception {
    List<String> expected = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      if (line.startsWith(EXPECT)) {
        expected.add(line.substring(EXPECT.length()));
      }
    }
    assertFalse(expected.isEmpty(), file + " declares no expected error");
    ServeConfig.ConfigException e =
        assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(file));
    List<String> got = e.errors();
    String all = String.join("\n", got);
    for (String line : got) {
      assertTrue(line.startsWith(file.toString()), "error does not name the file: " + line);
    }
    for (String want : expected) {
      long n = got.stream().filter(g -> g.startsWith(file + want)).count();
      assertEquals(1, n, "expected exactly one error '" + want + "', got:\n" + all);
    }
    assertEquals(expected.size(), got.size(), "unexpected extra errors:\n" + all);
  }

  @Test
  void aMissingFileIsOneError() {
    Path missing = dir.resolve("nope.yaml");
    ServeConfig.ConfigException e =
        assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(missing));
    assertEquals(List.of(missing + ": no such file (or not a regular file)"), e.errors());
  }

  @Test
  void invalidUtf8IsRefused() throws Exception {
    Path f = dir.resolve("bad.yaml");
    Files.write(f, new byte[] {'v', ':', ' ', (byte) 0xff, '\n'});
    ServeConfig.ConfigException e =
        assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(f));
    assertEquals(List.of(f + ": not valid UTF-8"), e.errors());
  }

  @Test
  void aGoodFileReadsEveryValueAndResolvesPathsAgainstItsDirectory() throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(
        f,
        String.join(
            "\n",
            "version: 1",
            "listen: 127.0.0.1:7471",
            "provider: AUTO",
            "scoping: region",
            "device:",
            "  bind-address: 127.0.0.1",
            "  bind-port: 18515",
            "  ibv-port: 2",
            "  gid-index: 3",
            "tls:",
            "  certificate: certs/host.host-1.crt",
            "  key: certs/host.host-1.key",
            "  key-passphrase-file: /etc/srdma/pass",
            "  ca-certificate: ca/ca.crt",
            "  crl: ca/crl.pem",
            "policy:",
            "  file: ../policy/policy.yaml",
            "  watch: false",
            "audit:",
            "  file: audit.log",
            "  rotate-size: 16MiB",
            "regions:",
            "  - tenant: acme",
            "    region: kvcache",
            "    size: 64MiB",
            "  - {tenant: globex, region: features, size: 4096}",
            "limits:",
            "  max-sessions: 100",
            "  max-sessions-per-tenant: 10",
            "  max-pending-handshakes: 8",
            "  auth-failures-per-minute: 5",
            "  handshake-timeout: 2s",
            "  request-timeout: 1500ms",
            "  idle-timeout: 2m",
            "  receive-depth: 64",
            "  shutdown-timeout: 30s",
            "record-size: 16KiB",
            ""),
        StandardCharsets.UTF_8);
    ServeConfig c = ServeConfig.read(f);
    assertEquals(7471, c.listen.getPort());
    assertEquals("127.0.0.1", c.listen.getAddress().getHostAddress());
    assertEquals("auto", c.provider);
    assertEquals("region", c.scoping);
    assertEquals(18515, c.bindPort);
    assertEquals(2, c.ibvPort);
    assertEquals(3, c.gidIndex);
    Path base = dir.toAbsolutePath();
    assertEquals(base.resolve("certs/host.host-1.crt"), c.certificate);
    assertEquals(base.resolve("certs/host.host-1.key"), c.key);
    assertEquals(Path.of("/etc/srdma/pass"), c.keyPassphraseFile);
    assertEquals(base.resolve("ca/crl.pem"), c.crl);
    assertEquals(base.getParent().resolve("policy/policy.yaml"), c.policyFile);
    assertFalse(c.watchPolicy);
    assertEquals(16L << 20, c.auditRotateBytes);
    assertEquals(2, c.regions.size());
    assertEquals(64L << 20, c.regions.get(0).size());
    assertEquals("features", c.regions.get(1).region());
    assertEquals(4096, c.regions.get(1).size());
    assertEquals(100, c.maxSessions);
    assertEquals(10, c.maxSessionsPerTenant);
    assertEquals(8, c.maxPendingHandshakes);
    assertEquals(5, c.authFailuresPerMinute);
    assertEquals(Duration.ofSeconds(2), c.handshakeTimeout);
    assertEquals(Duration.ofMillis(1500), c.requestTimeout);
    assertEquals(Duration.ofMinutes(2), c.idleTimeout);
    assertEquals(64, c.receiveDepth);
    assertEquals(Duration.ofSeconds(30), c.shutdownTimeout);
    assertEquals(16 * 1024, c.recordSize);
    assertTrue(c.where("limits.idle-timeout").endsWith(":34:3: limits.idle-timeout"));
  }

  @Test
  void theMinimalFileGetsTheDocumentedDefaults() throws Exception {
    Path f = dir.resolve("min.yaml");
    Files.writeString(
        f,
        "version: 1\nlisten: 127.0.0.1:0\n"
            + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
            + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n",
        StandardCharsets.UTF_8);
    ServeConfig c = ServeConfig.read(f);
    assertEquals("soft", c.provider);
    assertEquals("auto", c.scoping);
    assertEquals("127.0.0.1", c.bindAddress);
    assertEquals(0, c.bindPort);
    assertTrue(c.watchPolicy);
    assertTrue(c.regions.isEmpty());
    assertEquals(1024, c.maxSessions);
    assertEquals(64, c.maxSessionsPerTenant);
    assertEquals(32, c.maxPendingHandshakes);
    assertEquals(20, c.authFailuresPerMinute);
    assertEquals(Duration.ofSeconds(5), c.handshakeTimeout);
    assertEquals(Duration.ofSeconds(5), c.requestTimeout);
    assertEquals(Duration.ofSeconds(60), c.idleTimeout);
    assertEquals(256, c.receiveDepth);
    assertEquals(Duration.ofSeconds(20), c.shutdownTimeout);
    assertEquals(64 * 1024, c.recordSize);
    assertEquals(64L << 20, c.auditRotateBytes);
  }

  @Test
  void aConsoleSectionIsReadWithItsDefaults() throws Exception {
    String head =
        "version: 1\nlisten: 127.0.0.1:7471\n"
            + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
            + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n";
    Path none = dir.resolve("none.yaml");
    Files.writeString(none, head, StandardCharsets.UTF_8);
    assertFalse(ServeConfig.read(none).console);

    Path f = dir.resolve("console.yaml");
    Files.writeString(
        f,
        head
            + "console:\n"
            + "  listen: 0.0.0.0:8443\n"
            + "  certificate-chain: console/chain.pem\n"
            + "  key: console/console.key\n",
        StandardCharsets.UTF_8);
    ServeConfig c = ServeConfig.read(f);
    assertTrue(c.console);
    assertEquals(8443, c.consoleListen.getPort());
    assertTrue(c.consoleListen.getAddress().isAnyLocalAddress());
    assertEquals(dir.toAbsolutePath().resolve("console/chain.pem"), c.consoleCertificateChain);
    assertEquals(dir.toAbsolutePath().resolve("console/console.key"), c.consoleKey);
    assertEquals(null, c.consoleKeyPassphraseFile);
    assertEquals(null, c.consoleMetricsTokenFile);
    assertEquals(Duration.ofMinutes(30), c.consoleSessionTimeout);
    assertEquals(Duration.ofHours(8), c.consoleSessionLifetime);
    assertEquals(5, c.consoleLoginAttempts);
    assertEquals(Duration.ofMinutes(5), c.consoleLoginWindow);
    assertTrue(c.where("console.key").endsWith(":9:3: console.key"));
  }

  @Test
  void theExampleInTheDocsIsValid() throws Exception {
    String md = Files.readString(Path.of("..", "docs", "serve.md"), StandardCharsets.UTF_8);
    String begin = "<!-- serve-example: begin -->\n```yaml\n";
    int b = md.indexOf(begin);
    int e = md.indexOf("```\n<!-- serve-example: end -->");
    assertTrue(b >= 0 && e > b, "serve-example markers missing in docs/serve.md");
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, md.substring(b + begin.length(), e), StandardCharsets.UTF_8);
    ServeConfig c = ServeConfig.read(f);
    assertFalse(c.regions.isEmpty());
    assertTrue(c.console, "the example shows the console section");
  }

  // ---- hostile files, generated here: one clear error each, never a stack overflow

  private static final String MIN =
      "version: 1\nlisten: 127.0.0.1:0\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n";

  private List<String> errorsOf(String text) throws Exception {
    Path f = dir.resolve("hostile.yaml");
    Files.writeString(f, text, StandardCharsets.UTF_8);
    return assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(f)).errors();
  }

  private void assertOneError(String text, String positionAndReason) throws Exception {
    List<String> got = errorsOf(text);
    assertEquals(1, got.size(), String.join("\n", got));
    String want = dir.resolve("hostile.yaml") + positionAndReason;
    assertTrue(got.get(0).startsWith(want), got.get(0) + "\n  wanted " + want);
  }

  @Test
  void deepNestingIsOneErrorNotAStackOverflow() throws Exception {
    assertOneError(
        MIN + "limits: " + "[".repeat(1500) + "\n", ":6:40: nested more than 32 mappings");
    StringBuilder b = new StringBuilder(MIN + "limits:\n");
    for (int i = 1; i <= 600; i++) { // 2 x 600^2 / 2 bytes of indentation: under 1 MiB
      b.append("  ".repeat(i)).append("a:\n");
    }
    assertOneError(b.toString(), ":38:65: nested more than 32");
    assertOneError(MIN + "regions:\n  " + "- ".repeat(1500) + "x\n", ":7:");
  }

  @Test
  void anAliasBombIsRefusedBeforeItIsExpanded() throws Exception {
    StringBuilder b = new StringBuilder("a0: &a0 [lol, lol]\n");
    for (int i = 1; i < 30; i++) {
      b.append("a").append(i).append(": &a").append(i);
      b.append(" [*a").append(i - 1).append(", *a").append(i - 1).append("]\n");
    }
    List<String> got = errorsOf(b.toString());
    assertTrue(got.get(0).endsWith(":1:5: anchors are not allowed in a serve configuration"));
    assertTrue(got.stream().anyMatch(g -> g.contains("aliases are not allowed")));
  }

  @Test
  void hugeFilesAndTooManyNodesAreRefused() throws Exception {
    List<String> big = errorsOf(MIN + "#" + "x".repeat((int) ServeConfig.MAX_FILE_BYTES) + "\n");
    assertEquals(1, big.size());
    assertTrue(big.get(0).endsWith(": larger than 1048576 bytes; not a configuration file"));
    String many = MIN + "regions: [" + "a,".repeat(ServeConfig.MAX_NODES) + "a]\n";
    assertOneError(many, ":6:");
    assertTrue(errorsOf(many).get(0).contains("more than " + ServeConfig.MAX_NODES + " nodes"));
  }

  @Test
  void badCodePointsAreRefusedWithTheirPosition() throws Exception {
    for (String c : List.of("\u0000", "\u001b", "\u202e", "\ufffe", "\ufdd0", "\u009b")) {
      assertOneError(MIN + "provider: so" + c + "ft\n", ":6:13: character U+");
    }
  }

  @Test
  void quotedNumbersAreTextNotNumbers() throws Exception {
    List<String> got =
        errorsOf(
            MIN.replace("version: 1", "version: \"1\"")
                + "limits: {max-sessions: '8', idle-timeout: \"2m\"}\n"
                + "record-size: \"16KiB\"\n");
    assertEquals(4, got.size(), String.join("\n", got));
    assertTrue(
        got.get(0)
            .endsWith(
                ":1:10: version: must be a whole number written without quotes,"
                    + " got the text '1'"),
        got.get(0));
    assertTrue(got.get(1).contains("limits.max-sessions: must be a whole number written"));
    assertTrue(got.get(2).contains("limits.idle-timeout: must be a duration written"));
    assertTrue(got.get(3).contains("record-size: must be a size written"));
  }
}
