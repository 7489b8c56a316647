package io.srdma.server;

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
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A serve configuration path that holds a FIFO, a directory, or a file swapped for a FIFO between
 * its check and its open, is one error naming the file and what was there, within the open's bound
 * (a FIFO must not hang {@code srdma serve}); an honest configuration reached through links (as
 * Kubernetes mounts a ConfigMap) still loads.
 */
class ServeConfigHostileFileTest {
  private static final String HEAD =
      "version: 1\nlisten: 127.0.0.1:7471\n"
          + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
          + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n";

  @TempDir Path dir;

  @AfterEach
  void noHook() {
    ConfigReader.beforeOpen = null;
  }

  private static List<String> errors(Path file) {
    return assertTimeoutPreemptively(
            HANG_BOUND,
            () -> assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(file)))
        .errors();
  }

  @Test
  void aFifoAtTheConfigPathIsRefusedNamingIt() throws Exception {
    Path f = dir.resolve("serve.yaml");
    mkfifo(f);
    assertEquals(
        List.of(f + ": not a regular file (a FIFO, a socket or a device); refused"), errors(f));
  }

  @Test
  void aDirectoryAtTheConfigPathIsRefusedNamingIt() throws Exception {
    Path f = Files.createDirectory(dir.resolve("serve.yaml"));
    assertEquals(List.of(f + ": not a regular file (a directory); refused"), errors(f));
  }

  @Test
  void aFifoSwappedInAfterTheCheckEndsInAnErrorNotAHang() throws Exception {
    Path f = Files.writeString(dir.resolve("serve.yaml"), HEAD);
    HostileFiles.FifoSwap swap = HostileFiles.fifoSwapOnce(f);
    ConfigReader.beforeOpen = swap;
    List<String> errors = errors(f);
    assertTrue(swap.ran(), "the hook ran");
    assertEquals(1, errors.size(), errors.toString());
    String e = errors.get(0);
    assertTrue(e.startsWith(f + ": "), e);
    assertTrue(
        e.contains("its open blocked") || e.contains("changed between its check and its open"), e);
    assertTrue(e.endsWith("refused") || e.endsWith("refused unused"), e);
  }

  @Test
  void anHonestConfigReachedThroughLinksLoads() throws Exception {
    // Kubernetes' ConfigMap layout: serve.yaml -> ..data/serve.yaml, ..data -> ..2026_12_06/
    Path f = HostileFiles.configMapLink(dir, "serve.yaml", HEAD.getBytes(StandardCharsets.UTF_8));
    ServeConfig c = assertTimeoutPreemptively(HANG_BOUND, () -> ServeConfig.read(f));
    // relative paths still resolve against the directory the operator named
    assertEquals(dir.resolve("policy.yaml").toAbsolutePath(), c.policyFile.toAbsolutePath());
  }
}
