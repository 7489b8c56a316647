package io.srdma.cluster;

import static io.srdma.testsupport.HostileFiles.HANG_BOUND;
import static io.srdma.testsupport.HostileFiles.mkfifo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.testsupport.HostileFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster configuration path that holds a FIFO or a directory, or a file swapped for a FIFO
 * between its check and its open, is BAD_CONFIG naming the file and what was there, within the
 * open's bound; an honest configuration reached through links (a Kubernetes ConfigMap) loads.
 */
class ClusterConfigHostileFileTest {
  private static final String SECTION =
      """
      cluster:
        endpoints: [https://10.0.0.1:2379]
        ca-certificate: ca.crt
        certificate: c.crt
        key: c.key
        prefix: /srdma/prod
      """;

  @TempDir Path dir;

  @AfterEach
  void noHook() {
    ClusterConfig.beforeOpen = null;
  }

  private static String refusal(Path file) {
    ClusterException e =
        assertTimeoutPreemptively(
            HANG_BOUND, () -> assertThrows(ClusterException.class, () -> ClusterConfig.read(file)));
    assertEquals(ClusterException.Reason.BAD_CONFIG, e.reason());
    return e.getMessage();
  }

  @Test
  void aFifoAtTheConfigPathIsBadConfigNamingIt() throws Exception {
    Path f = dir.resolve("serve.yaml");
    mkfifo(f);
    String m = refusal(f);
    assertTrue(m.contains(f + ": not a regular file (a FIFO, a socket or a device); refused"), m);
  }

  @Test
  void aDirectoryAtTheConfigPathIsBadConfigNamingIt() throws Exception {
    Path f = Files.createDirectory(dir.resolve("serve.yaml"));
    String m = refusal(f);
    assertTrue(m.contains(f + ": not a regular file (a directory); refused"), m);
  }

  @Test
  void aFifoSwappedInAfterTheCheckEndsInBadConfigNotAHang() throws Exception {
    Path f = Files.writeString(dir.resolve("serve.yaml"), SECTION);
    HostileFiles.FifoSwap swap = HostileFiles.fifoSwapOnce(f);
    ClusterConfig.beforeOpen = swap;
    String m = refusal(f);
    assertTrue(swap.ran(), "the hook ran");
    assertTrue(m.contains(f + ": "), m);
    assertTrue(
        m.contains("its open blocked") || m.contains("changed between its check and its open"), m);
  }

  @Test
  void anHonestConfigReachedThroughLinksLoads() throws Exception {
    // Kubernetes' ConfigMap layout: serve.yaml -> ..data/serve.yaml, ..data -> ..2026_12_06/
    Path f =
        HostileFiles.configMapLink(dir, "serve.yaml", SECTION.getBytes(StandardCharsets.UTF_8));
    ClusterConfig c = assertTimeoutPreemptively(HANG_BOUND, () -> ClusterConfig.read(f));
    assertEquals("/srdma/prod", c.prefix());
    // relative paths still resolve against the directory the operator named
    assertEquals(dir.resolve("ca.crt").toAbsolutePath(), c.caCertificate().toAbsolutePath());
  }
}
