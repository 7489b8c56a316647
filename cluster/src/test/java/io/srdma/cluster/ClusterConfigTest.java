package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.common.ScalarStyle;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

class ClusterConfigTest {
  @TempDir Path dir;

  private ClusterConfig read(String yaml) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, yaml);
    return ClusterConfig.read(f);
  }

  private List<String> errors(String yaml) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(f, yaml);
    ClusterException e = assertThrows(ClusterException.class, () -> ClusterConfig.read(f));
    assertEquals(ClusterException.Reason.BAD_CONFIG, e.reason());
    return ClusterConfig.errors(e);
  }

  @Test
  void shouldReadAFullSectionAndResolvePathsAgainstTheFile() throws Exception {
    ClusterConfig c =
        read(
            """
            version: 1
            listen: 127.0.0.1:7000
            cluster:
              endpoints: [https://10.0.0.1:2379, "https://[::1]:2379"]
              ca-certificate: ca.crt
              certificate: /etc/srdma/etcd.crt
              key: etcd.key
              prefix: /srdma/prod
              host: h1
              server-name: etcd.example
              request-timeout: 500ms
              watch-check-period: 750ms
            """);
    assertEquals(
        List.of(URI.create("https://10.0.0.1:2379"), URI.create("https://[::1]:2379")),
        c.endpoints());
    assertEquals(dir.resolve("ca.crt").toAbsolutePath(), c.caCertificate());
    assertEquals(Path.of("/etc/srdma/etcd.crt"), c.certificate());
    assertEquals("/srdma/prod", c.prefix());
    assertEquals("h1", c.host());
    assertEquals("etcd.example", c.serverName());
    assertEquals(Duration.ofMillis(500), c.requestTimeout());
    assertEquals(Duration.ofMillis(750), c.watchCheckPeriod());
    assertEquals(
        "/srdma/prod/hosts/h1/policy",
        c.keys().hostPolicy("h1").toString(java.nio.charset.StandardCharsets.UTF_8));
  }

  @Test
  void shouldListEveryErrorWithItsPosition() throws Exception {
    List<String> e =
        errors(
            """
            cluster:
              endpoints: [http://10.0.0.1:2379, https://10.0.0.2]
              certificate: c.crt
              prefix: srdma/
              host: Bad Name
              request-timeout: forever
              colour: blue
            """);
    String all = String.join("\n", e);
    assertTrue(all.contains(":2:15: cluster.endpoints: must be an https URL"), all);
    assertTrue(all.contains(":2:37: cluster.endpoints: must name a host and a port"), all);
    assertTrue(all.contains("cluster.prefix: must look like /srdma/prod"), all);
    assertTrue(all.contains("cluster.host: must be a lower-case name"), all);
    assertTrue(all.contains("cluster.request-timeout: must be a positive duration"), all);
    assertTrue(all.contains("cluster.colour: unknown key"), all);
    assertTrue(all.contains("missing required key 'ca-certificate'"), all);
    assertTrue(all.contains("missing required key 'key'"), all);
  }

  @Test
  void shouldCheckEachWatchEveryTwoSecondsUnlessToldAndRefuseAPeriodOutOfRange() throws Exception {
    String section =
        """
        cluster:
          endpoints: [https://10.0.0.1:2379]
          ca-certificate: ca.crt
          certificate: c.crt
          key: c.key
          prefix: /srdma/prod
        """;
    assertEquals(Duration.ofSeconds(2), read(section).watchCheckPeriod());
    for (String bad : List.of("50ms", "2m", "never", "0s")) {
      String all = String.join("\n", errors(section + "  watch-check-period: " + bad + "\n"));
      assertTrue(all.contains(":7:23: cluster.watch-check-period: must be"), all);
    }
    assertEquals(
        Duration.ofMillis(100), read(section + "  watch-check-period: 100ms\n").watchCheckPeriod());
    assertEquals(
        Duration.ofMinutes(1), read(section + "  watch-check-period: 1m\n").watchCheckPeriod());
    ClusterConfig c = read(section);
    ClusterException e =
        assertThrows(
            ClusterException.class,
            () -> c.toBuilder().watchCheckPeriod(Duration.ofMillis(99)).build());
    assertEquals(ClusterException.Reason.BAD_CONFIG, e.reason());
  }

  @Test
  void shouldSayWhenThereIsNoClusterSection() throws Exception {
    List<String> e = errors("version: 1\n");
    assertTrue(
        e.get(0).endsWith("no 'cluster' section; this deployment is not clustered"), e.get(0));
  }

  @Test
  void shouldRefuseHostileYamlWithOneClearError() throws Exception {
    List<String> e = errors("cluster: &a\n  x: *a\n");
    assertTrue(e.get(0).contains("anchors"), e.get(0));
  }

  private static void assertPrintable(String text) {
    for (int i = 0; i < text.length(); i++) {
      int type = Character.getType(text.charAt(i));
      assertTrue(
          type != Character.CONTROL
              && type != Character.FORMAT
              && type != Character.LINE_SEPARATOR
              && type != Character.PARAGRAPH_SEPARATOR
              && type != Character.SURROGATE,
          String.format("raw U+%04X at %d in: %s", (int) text.charAt(i), i, text));
    }
  }

  @Test
  void shouldEscapeControlCharactersOfEchoedValuesAndKeys() throws Exception {
    // YAML escapes: the values hold LF, CR, tab and a zero-width space
    String hostile = "\\n\\r\\t\\u200B";
    String escaped = "\\u000A\\u000D\\u0009\\u200B";
    ClusterException e =
        assertThrows(
            ClusterException.class,
            () ->
                read(
                    "cluster:\n"
                        + "  endpoints: [\"https://10.0.0.1:2379/x"
                        + hostile
                        + "\"]\n"
                        + "  ca-certificate: e.crt\n  certificate: c.crt\n  key: c.key\n"
                        + "  prefix: \"/srdma"
                        + hostile
                        + "\"\n  host: \"h"
                        + hostile
                        + "\"\n  request-timeout: \"5s"
                        + hostile
                        + "\"\n  \"col"
                        + hostile
                        + "our\": blue\n"));
    assertPrintable(e.getMessage().replace("\n", ""));
    List<String> errors = ClusterConfig.errors(e);
    assertEquals(
        5, errors.size(), "one line per error: a value's line feed splits none\n" + errors);
    errors.forEach(ClusterConfigTest::assertPrintable);
    String all = String.join("\n", errors);
    assertTrue(all.contains("'https://10.0.0.1:2379/x" + escaped + "'"), all);
    assertTrue(all.contains("got '/srdma" + escaped + "'"), all);
    assertTrue(all.contains("got 'h" + escaped + "'"), all);
    assertTrue(all.contains("got '5s" + escaped + "'"), all);
    assertTrue(all.contains("cluster.col" + escaped + "our: unknown key"), all);
  }

  @Test
  void shouldEscapeABidiOverrideInAValueTheCallerComposed() {
    // parse() takes any node: one composed without BoundedYaml may hold U+202E
    Node node =
        new Compose(LoadSettings.builder().build())
            .composeString("endpoints: [https://10.0.0.1:2379]\nprefix: x\n")
            .orElseThrow();
    MappingNode m = (MappingNode) node;
    ScalarNode old = (ScalarNode) m.getValue().get(1).getValueNode();
    ScalarNode evil =
        new ScalarNode(
            old.getTag(),
            true,
            "/a\n\r\t\u202Eb",
            ScalarStyle.DOUBLE_QUOTED,
            old.getStartMark(),
            old.getEndMark());
    m.getValue().set(1, new NodeTuple(m.getValue().get(1).getKeyNode(), evil));
    List<String> errors = new java.util.ArrayList<>();
    assertEquals(null, ClusterConfig.parse(m, "f.yaml", dir, errors));
    errors.forEach(ClusterConfigTest::assertPrintable);
    assertTrue(
        errors.stream().anyMatch(l -> l.contains("got '/a\\u000A\\u000D\\u0009\\u202Eb'")),
        errors.toString());
  }
}
