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
}
