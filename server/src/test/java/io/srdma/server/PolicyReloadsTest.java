package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * After a watched reload the console re-reads the policy file for its text. The file may have been
 * replaced meanwhile (by whoever can write the policy's directory): a huge file or a device must
 * cost a typed error naming the file, never the host's heap.
 */
class PolicyReloadsTest {
  @TempDir Path dir;

  @Test
  void shouldReadThePolicyTextOfAFileWithinTheLimit() throws Exception {
    Path f = dir.resolve("policy.yaml");
    Files.writeString(f, "version: 1\ntenants: {}\n", StandardCharsets.UTF_8);
    assertEquals("version: 1\ntenants: {}\n", PolicyReloads.policyText(f));
  }

  @Test
  void shouldRefuseAFileSwappedForADeviceWithoutReadingIt() throws Exception {
    Path zero = Path.of("/dev/zero");
    Assumptions.assumeTrue(Files.exists(zero));
    Path f = Files.createSymbolicLink(dir.resolve("policy.yaml"), zero);
    PolicyException e =
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () -> assertThrows(PolicyException.class, () -> PolicyReloads.policyText(f)));
    assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
  }

  @Test
  void shouldRefuseAFileOverTheLoadersLimitNamingFileAndLimit() throws Exception {
    Path f = dir.resolve("policy.yaml");
    try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
      r.setLength(PolicyLoader.DEFAULT_MAX_FILE_BYTES + 1); // sparse: costs no disk
    }
    PolicyException e = assertThrows(PolicyException.class, () -> PolicyReloads.policyText(f));
    assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
    assertTrue(
        e.getMessage().contains("limit of " + PolicyLoader.DEFAULT_MAX_FILE_BYTES + " bytes"),
        e.getMessage());
  }
}
