package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cluster.key-passphrase-file that never ends. */
class ClusterPassphraseFileTest {
  @TempDir Path tmp;

  @Test
  void shouldRefuseAPassphraseFileWithoutEndAsABadConfig() {
    Path zero = Path.of("/dev/zero");
    Assumptions.assumeTrue(Files.exists(zero));
    ClusterConfig config =
        ClusterConfig.builder()
            .endpoints(List.of(URI.create("https://127.0.0.1:2379")))
            .caCertificate(tmp.resolve("ca.crt"))
            .certificate(tmp.resolve("host.crt"))
            .key(tmp.resolve("host.key"))
            .keyPassphraseFile(zero)
            .prefix("/srdma")
            .build();
    // read whole, /dev/zero ends in an OutOfMemoryError, not a ClusterException
    ClusterException e =
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () -> assertThrows(ClusterException.class, () -> EtcdLink.open(config)));
    assertTrue(e.getMessage().contains("/dev/zero"), e.getMessage());
  }
}
