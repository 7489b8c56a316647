package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.AuditAction;
import io.srdma.policy.AuditEvent;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditOutcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditCommandTest {
  @TempDir Path dir;
  private Path log;
  private String head;

  @BeforeEach
  void writeLog() {
    log = dir.resolve("audit.log");
    try (AuditLog a = AuditLog.open(log, 2048, java.time.Clock.systemUTC())) {
      for (int i = 0; i < 30; i++) {
        head =
            a.append(
                AuditEvent.builder(AuditAction.REVOKE, AuditOutcome.SUCCESS)
                    .actor("admin")
                    .tenant("acme")
                    .reason("console")
                    .grant("g-" + i)
                    .build());
      }
    }
  }

  private List<String> all() throws Exception {
    List<String> files = new ArrayList<>();
    try (var s = Files.list(dir)) {
      s.map(Path::toString).sorted().forEach(files::add);
    }
    return files;
  }

  @Test
  void shouldExitZeroForAnIntactChainAcrossRotatedFiles() throws Exception {
    List<String> args = new ArrayList<>(List.of("audit", "verify", "--head", head));
    args.addAll(all());
    assertTrue(args.size() > 5, args.toString());
    CliRun r = CliRun.of(args.toArray(String[]::new));
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().startsWith("OK 30 lines, seq 1..30 (from genesis), head " + head), r.out());
  }

  @Test
  void shouldReportTheFirstBrokenLine() throws Exception {
    List<String> lines = new ArrayList<>(Files.readAllLines(log));
    lines.set(1, lines.get(1).replace("\"actor\":\"admin\"", "\"actor\":\"nobody\""));
    Files.write(log, lines);
    List<String> args = new ArrayList<>(List.of("audit", "verify"));
    args.addAll(all());
    CliRun r = CliRun.of(args.toArray(String[]::new));
    assertEquals(1, r.exit());
    assertTrue(r.err().startsWith(log + ":2: edited"), r.err());
  }

  @Test
  void shouldExitOneForAnUnreadableFile() {
    CliRun r = CliRun.of("audit", "verify", dir.resolve("missing.log").toString());
    assertEquals(1, r.exit());
    assertTrue(r.err().contains("cannot read"), r.err());
  }
}
