package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DoctorCommandTest {
  @TempDir Path dir;

  private void write(String path, String text) throws IOException {
    Path p = dir.resolve(path);
    Files.createDirectories(p.getParent());
    Files.writeString(p, text);
  }

  @Test
  void shouldReportThisHostAndSayWhichProviderIsPossible() {
    CliRun run = CliRun.of("doctor");
    boolean rdmaHere = Files.isDirectory(Path.of("/sys/class/infiniband"));
    // a host with RDMA devices may be misconfigured (1); one without is always usable (0)
    assertTrue(run.exit() == 0 || (rdmaHere && run.exit() == 1), run.out() + run.err());
    assertTrue(run.out().startsWith("srdma doctor: RDMA setup of this host"), run.out());
    assertTrue(run.out().contains("libibverbs  "), run.out());
    assertTrue(run.out().contains("memlock     "), run.out());
    assertTrue(run.out().contains("verdict: "), run.out());
    // the data path's AES-GCM: which, why, and the JDK's rates (the JDK is always a candidate
    // unless ACCP is forced, and then it is shown for comparison)
    assertTrue(
        run.out()
            .lines()
            .anyMatch(
                l -> l.matches("data-path AEAD: (jdk|accp|openssl|gcrypt|ipsec-mb) \\(.+\\), .+")),
        run.out());
    assertTrue(
        run.out().lines().anyMatch(l -> l.matches("  jdk +64 B .* us, 4 KiB .* MB/s, 64 KiB .*")),
        run.out());
    if (!rdmaHere) {
      assertTrue(run.out().contains("no RDMA device found"), run.out());
      assertTrue(run.out().contains("soft provider only"), run.out());
    }
  }

  @Test
  void shouldExitOneForADownPortInAFakeSysfs() throws IOException {
    write("sys/class/infiniband/rxe0/ports/1/state", "1: DOWN\n");
    write("sys/class/infiniband/rxe0/ports/1/phys_state", "3: Disabled\n");
    write("sys/class/infiniband/rxe0/ports/1/link_layer", "Ethernet\n");
    write("sys/class/infiniband/rxe0/ports/1/gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
    write("sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1", "RoCE v2\n");
    write("sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/1", "eth0\n");
    write("sys/class/net/eth0/mtu", "1500\n");
    write("proc/self/limits", "Max locked memory  unlimited  unlimited  bytes\n");
    write("lib/libibverbs.so.1", "");
    CliRun run =
        CliRun.of(
            "doctor",
            "--sysfs",
            dir.resolve("sys").toString(),
            "--proc",
            dir.resolve("proc").toString(),
            "--lib-dir",
            dir.resolve("lib").toString());
    assertEquals(1, run.exit(), run.out());
    assertTrue(run.out().contains("device rxe0  provider rdma_rxe (Soft-RoCE)"), run.out());
    assertTrue(run.out().contains("ERROR rxe0 port 1: port is DOWN, not ACTIVE"), run.out());
    assertTrue(run.out().contains("fix: ip link set eth0 up"), run.out());
    assertTrue(run.out().contains("verdict: MISCONFIGURED"), run.out());
  }

  @Test
  void shouldBeListedInHelp() {
    CliRun run = CliRun.of("--help");
    assertTrue(run.out().contains("doctor"), run.out());
  }
}
