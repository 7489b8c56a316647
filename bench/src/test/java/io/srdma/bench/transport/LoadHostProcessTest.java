package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.host.HostStats;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code srdma bench --load --host-process}: a tiny load with the host in a child JVM runs end to
 * end with per-side figures, and the child is gone afterwards, also when the run fails after it
 * started. No speed is asserted.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LoadHostProcessTest {
  private static LoadConfig tiny() {
    return new LoadConfig(
            4, 2, 16, Duration.ofSeconds(2), Duration.ofSeconds(1), 128, 2, 5, 50, "soft")
        .withHostProcess(true)
        .withOpenerThreads(1); // passed to the child: its host opens on one thread
  }

  @Test
  void shouldRunATinyLoadWithTheHostInItsOwnProcessAndLeaveNoProcess() throws Exception {
    StringWriter log = new StringWriter();
    LoadResult r;
    ProcessHandle child;
    try (LoadRun run = new LoadRun(tiny(), new PrintWriter(log, true))) {
      r = run.run();
      child = run.hostProcess().handle();
      assertTrue(child.isAlive(), log.toString());
    }
    StringWriter report = new StringWriter();
    LoadRun.print(new PrintWriter(report, true), r);
    String shown = log + "\n" + report;

    assertGone(child, shown);
    assertEquals(Map.of(), r.errors(), shown);
    assertTrue(r.records() > 0, shown);
    assertEquals(4, r.sessionsEnd(), shown);
    assertEquals(r.revocations(), r.refusedRevokedWrites(), shown);
    LoadFootprint f = r.footprint();
    assertTrue(f.hostProcess(), shown);
    assertNotNull(f.hostIdle(), shown);
    assertTrue(f.hostThreads() > 0 && f.clientThreads() > 0, shown);
    assertTrue(f.handshakeFloorPerSecond() > 0 && f.setupPerSecond() > 0, shown);
    assertTrue(report.toString().contains("host in its own process"), shown);
    String json = Report.json(LoadResult.json(Map.of("tool", "test"), r));
    assertTrue(
        json.contains("\"hostProcess\": true") || json.contains("\"hostProcess\":true"), json);
    assertTrue(json.contains("\"hostBytesPerSession\""), json);
  }

  @Test
  void shouldKillTheChildWhenTheRunFailsAfterItStarted() throws Exception {
    StringWriter log = new StringWriter();
    ProcessHandle child;
    try (LoadRun run = new LoadRun(tiny(), new PrintWriter(log, true))) {
      run.afterHostStart =
          () -> {
            throw new IllegalArgumentException("a bad option found after the host started");
          };
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, run::run);
      assertTrue(e.getMessage().contains("bad option"), e.toString());
      child = run.hostProcess().handle();
      assertTrue(child.isAlive(), "the child runs until the run is closed\n" + log);
    }
    assertGone(child, log.toString());
  }

  @Test
  void shouldNameTheChildsStderrWhenItCannotStart() throws Exception {
    StringWriter log = new StringWriter();
    LoadConfig bad =
        new LoadConfig(
                4, 2, 16, Duration.ofSeconds(1), Duration.ZERO, 128, 2, 0, 50, "no-such-provider")
            .withHostProcess(true);
    try (LoadRun run = new LoadRun(bad, new PrintWriter(log, true))) {
      IllegalStateException e = assertThrows(IllegalStateException.class, run::run);
      assertTrue(e.getMessage().contains("load host process"), e.toString());
      Matcher m = Pattern.compile("its stderr: (\\S+\\.log)").matcher(e.getMessage());
      assertTrue(m.find(), e.toString());
      Path stderr = Path.of(m.group(1));
      assertTrue(Files.size(stderr) > 0, "the child's stderr file is empty: " + stderr);
      Files.delete(stderr);
    }
    assertTrue(
        ProcessHandle.current()
            .descendants()
            .noneMatch(p -> p.info().commandLine().orElse("").contains("LoadHostMain")),
        "a LoadHostMain process is left");
  }

  @Test
  void shouldCarryHostStatsAsOneLine() {
    HostStats s =
        new HostStats(3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
    assertEquals(s, LoadHostProcess.parse(LoadHostProcess.format(s)));
  }

  private static void assertGone(ProcessHandle child, String shown) throws Exception {
    child.onExit().get(30, TimeUnit.SECONDS);
    assertFalse(child.isAlive(), "the host process outlived its load run\n" + shown);
  }
}
