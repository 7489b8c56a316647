package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** A policy path that is not a regular file of bounded size. */
class PolicyFileKindTest {
  @Test
  void shouldRefuseADeviceAsAPolicyFileWithoutReadingItAll() {
    Path zero = Path.of("/dev/zero");
    Assumptions.assumeTrue(Files.exists(zero));
    // Files.size is 0 for a device, so the size check passes, and readAllBytes then reads until
    // the heap or the array limit is exhausted: an OutOfMemoryError, not a refused policy
    PolicyException e =
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () -> assertThrows(PolicyException.class, () -> new PolicyLoader().load(zero)));
    assertTrue(e.getMessage().contains("/dev/zero"), e.getMessage());
  }
}
