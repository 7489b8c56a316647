package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code srdma policy push FILE}: a FIFO or a directory at FILE, or a FIFO swapped in between its
 * check and its open, is one line naming FILE and what was there, exit 1, within the open's bound
 * (never a hang); a policy file reached through a link is read (the command goes on to the CA).
 */
class PolicyPushFileTest {
  /** Far above the open's 10 s bound: only a hang reaches it. */
  private static final Duration BOUND = Duration.ofSeconds(60);

  @TempDir Path tmp;

  @AfterEach
  void noHook() {
    ClusterPolicyCommands.beforeOpen = null;
  }

  private static void mkfifo(Path p) throws Exception {
    Process proc = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
    assumeTrue(proc.waitFor(30, TimeUnit.SECONDS) && proc.exitValue() == 0, "needs mkfifo");
  }

  private Path policy(Path p) throws Exception {
    try (var in =
        io.srdma.policy.PolicyLoader.class.getResourceAsStream(
            io.srdma.policy.PolicyLoader.SAMPLE_RESOURCE)) {
      Files.write(p, in.readAllBytes());
    }
    return p;
  }

  private CliRun push(Path file) {
    return assertTimeoutPreemptively(
        BOUND,
        () ->
            CliRun.of(
                "policy",
                "push",
                file.toString(),
                "--cluster",
                tmp.resolve("serve.yaml").toString(),
                "--ca",
                tmp.resolve("ca").toString()));
  }

  @Test
  void aFifoIsRefusedNamingIt() throws Exception {
    Path f = tmp.resolve("policy.yaml");
    mkfifo(f);
    CliRun r = push(f);
    assertEquals(1, r.exit(), r.err());
    assertEquals(
        f + ": not a regular file (a FIFO, a socket or a device); refused; nothing was sent\n",
        r.err());
  }

  @Test
  void aDirectoryIsRefusedNamingIt() throws Exception {
    Path f = Files.createDirectory(tmp.resolve("policy.yaml"));
    CliRun r = push(f);
    assertEquals(1, r.exit(), r.err());
    assertEquals(f + ": not a regular file (a directory); refused; nothing was sent\n", r.err());
  }

  @Test
  void aFifoSwappedInAfterTheCheckIsRefusedNotWaitedOn() throws Exception {
    Path f = policy(tmp.resolve("policy.yaml"));
    AtomicBoolean swapped = new AtomicBoolean();
    ClusterPolicyCommands.beforeOpen =
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
    CliRun r = push(f);
    assertTrue(swapped.get(), "the hook ran");
    assertEquals(1, r.exit(), r.err());
    assertTrue(r.err().startsWith(f + ": "), r.err());
    assertTrue(
        r.err().contains("its open blocked")
            || r.err().contains("changed between its check and its open"),
        r.err());
    assertTrue(r.err().endsWith("; nothing was sent\n"), r.err());
  }

  @Test
  void aLinkedPolicyFileIsRead() throws Exception {
    Path real = Files.createDirectory(tmp.resolve("..2026_12_06"));
    policy(real.resolve("policy.yaml"));
    Files.createSymbolicLink(tmp.resolve("..data"), real.getFileName());
    Path f = Files.createSymbolicLink(tmp.resolve("policy.yaml"), Path.of("..data/policy.yaml"));
    CliRun r = push(f);
    // read, then refused for want of a CA in --ca DIR, not for the file
    assertTrue(r.err().contains("no deployment CA in"), r.err());
    assertFalse(r.err().contains("policy.yaml"), r.err());
    // an operational failure, as for cert issue/revoke: exit 1, which --help says
    assertEquals(1, r.exit(), r.err());
  }

  @Test
  void theHelpListsNoCaUnderTheExitStatusTheCommandGives() {
    CliRun h = CliRun.of("policy", "push", "--help");
    assertEquals(0, h.exit(), h.err());
    String out = h.out();
    String help = out.substring(out.indexOf("Exit status:")).replaceAll("\\s+", " ");
    String exit1 = help.substring(help.indexOf(" 1 "), help.indexOf(" 2 "));
    String exit2 = help.substring(help.indexOf(" 2 "), help.indexOf(" 4 "));
    assertTrue(exit1.contains("no CA in --ca DIR"), exit1);
    assertFalse(exit2.contains("CA"), exit2);
  }
}
