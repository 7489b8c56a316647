package io.srdma.cli;

import static io.srdma.testsupport.HostileFiles.HANG_BOUND;
import static io.srdma.testsupport.HostileFiles.mkfifo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.testsupport.HostileFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code srdma policy push FILE}: a FIFO or a directory at FILE, or a FIFO swapped in between its
 * check and its open, is one line naming FILE and what was there, exit 1, within the open's bound
 * (never a hang); a policy file reached through a link is read (the command goes on to the CA).
 */
class PolicyPushFileTest {
  @TempDir Path tmp;

  @AfterEach
  void noHook() {
    ClusterPolicyCommands.beforeOpen = null;
  }

  private static byte[] sample() throws Exception {
    try (var in =
        io.srdma.policy.PolicyLoader.class.getResourceAsStream(
            io.srdma.policy.PolicyLoader.SAMPLE_RESOURCE)) {
      return in.readAllBytes();
    }
  }

  private Path policy(Path p) throws Exception {
    Files.write(p, sample());
    return p;
  }

  private CliRun push(Path file) {
    return assertTimeoutPreemptively(
        HANG_BOUND,
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
    HostileFiles.FifoSwap swap = HostileFiles.fifoSwapOnce(f);
    ClusterPolicyCommands.beforeOpen = swap;
    CliRun r = push(f);
    assertTrue(swap.ran(), "the hook ran");
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
    Path f = HostileFiles.configMapLink(tmp, "policy.yaml", sample());
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
