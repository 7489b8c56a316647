package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.bouncycastle.crypto.generators.OpenBSDBCrypt;
import org.junit.jupiter.api.Test;

/**
 * A login for an unknown user name must cost what one for a known user costs: otherwise the time of
 * a wrong login tells which user names exist. The decoy used to be one fixed Argon2id hash (64
 * MiB), while the policy's users may be bcrypt, or Argon2id with other parameters.
 */
class ConsoleUsersTimingTest {

  /** The sample policy with its only console user hashed by bcrypt at cost 4 (about 1 ms). */
  private static Policy cheapBcryptPolicy() throws IOException {
    String sample;
    try (InputStream in =
        PolicyLoader.class.getResourceAsStream("/io/srdma/policy/sample-policy.yaml")) {
      sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String hash =
        "$shiro2" + OpenBSDBCrypt.generate("2y", "right-password".toCharArray(), new byte[16], 4);
    int users = sample.indexOf("console:");
    String text =
        sample.substring(0, users)
            + "console:\n  users:\n    ops:\n      password-hash: \""
            + hash
            + "\"\n      roles: [auditor]\n";
    return new PolicyLoader().parse("cheap.yaml", text);
  }

  private static long medianNanos(ConsoleUsers users, String user, int runs) {
    long[] t = new long[runs];
    for (int i = 0; i < runs; i++) {
      long start = System.nanoTime();
      users.authenticate(user, "wrong-password".toCharArray());
      t[i] = System.nanoTime() - start;
    }
    Arrays.sort(t);
    return t[runs / 2];
  }

  @Test
  void shouldCostTheSameForAnUnknownUserAsForAKnownOneWithAnotherHashKind() throws IOException {
    Policy p = cheapBcryptPolicy();
    ConsoleUsers users = new ConsoleUsers(() -> p);
    assertTrue(users.authenticate("ops", "right-password".toCharArray()).succeeded());
    assertEquals(
        ConsoleAuthResult.Failure.UNKNOWN_USER,
        users.authenticate("mallory", "right-password".toCharArray()).failure());
    // warm up both paths (the first unknown user also makes the decoy)
    medianNanos(users, "ops", 3);
    medianNanos(users, "mallory", 3);
    long known = medianNanos(users, "ops", 9);
    long unknown = medianNanos(users, "mallory", 9);
    assertTrue(
        unknown < 5 * known + 5_000_000L,
        "an unknown user costs "
            + unknown / 1000
            + " us, a known one with a wrong password "
            + known / 1000
            + " us: the time tells which user names exist");
  }
}
