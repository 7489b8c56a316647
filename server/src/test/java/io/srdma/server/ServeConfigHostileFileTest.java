package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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

  /** Far above the open's 10 s bound: only a hang reaches it. */
  private static final Duration BOUND = Duration.ofSeconds(60);

  @TempDir Path dir;

  @AfterEach
  void noHook() {
    ConfigReader.beforeOpen = null;
  }

  private static void mkfifo(Path p) throws Exception {
    Process proc = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
    assumeTrue(proc.waitFor(30, TimeUnit.SECONDS) && proc.exitValue() == 0, "needs mkfifo");
  }

  private static List<String> errors(Path file) {
    return assertTimeoutPreemptively(
            BOUND,
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
    AtomicBoolean swapped = new AtomicBoolean();
    ConfigReader.beforeOpen =
        p -> {
          if (p.equals(f) && swapped.compareAndSet(false, true)) {
            try {
              Files.delete(f);
              mkfifo(f);
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }
        };
    List<String> errors = errors(f);
    assertTrue(swapped.get(), "the hook ran");
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
    Path real = Files.createDirectory(dir.resolve("..2026_12_06"));
    Files.writeString(real.resolve("serve.yaml"), HEAD);
    Files.createSymbolicLink(dir.resolve("..data"), real.getFileName());
    Path f = Files.createSymbolicLink(dir.resolve("serve.yaml"), Path.of("..data", "serve.yaml"));
    ServeConfig c = assertTimeoutPreemptively(BOUND, () -> ServeConfig.read(f));
    // relative paths still resolve against the directory the operator named
    assertEquals(dir.resolve("policy.yaml").toAbsolutePath(), c.policyFile.toAbsolutePath());
  }
}
