package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.KeyExchangeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** tls.key-passphrase-file and the console's are read before anything starts. */
class PassphraseFileTest {
  @TempDir Path tmp;

  @Test
  void shouldRefuseAPassphraseFileWithoutEndWithATypedError() {
    Path zero = Path.of("/dev/zero");
    Assumptions.assumeTrue(Files.exists(zero));
    // 'key-passphrase-file: /dev/zero' in serve.yaml: read whole, it ends in an
    // OutOfMemoryError that takes srdma serve down instead of a configuration error (exit 2)
    KeyExchangeException e =
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () -> assertThrows(KeyExchangeException.class, () -> Passphrases.read(zero)));
    assertTrue(e.getMessage().contains("/dev/zero"), e.getMessage());
  }

  @Test
  void shouldStillReadTheFirstLineOfAPassphraseFile() throws Exception {
    Path f = tmp.resolve("pass");
    Files.writeString(f, "correct horse\nsecond line\n", StandardCharsets.UTF_8);
    assertArrayEquals("correct horse".toCharArray(), Passphrases.read(f));
  }
}
