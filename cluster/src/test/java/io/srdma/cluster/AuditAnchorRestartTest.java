package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.srdma.policy.AuditKey;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit anchor holds across restarts: a host whose log was cut (or whose active file was
 * deleted) while it was down keeps the anchor in etcd, reports the mismatch and audits it, until an
 * operator drops the anchor; an honest restart goes on anchoring; anchors are compare-and-swapped.
 */
@Timeout(120)
class AuditAnchorRestartTest {
  private static final String PREFIX = "/srdma/a";

  @TempDir Path dir;
  private EtcdTestCluster etcd;
  private EtcdLink console;
  private Path file;

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdTestCluster.start(dir.resolve("etcd"));
    console = EtcdLink.open(etcd.clientConfig(PREFIX, null));
    Files.createDirectories(dir.resolve("log"));
    file = dir.resolve("log").resolve("audit.log");
  }

  @AfterEach
  void stop() {
    console.close();
    etcd.close();
  }

  private ClusterNode node(AuditLog log) {
    AuditTrail trail = new AuditTrail(log);
    return ClusterNode.start(
        new ClusterNode.Options()
            .config(etcd.clientConfig(PREFIX, "h1"))
            .host("h1")
            .auditHead(AuditAnchor.headOf(log), AuditAnchor.chainOf(log))
            .anchorListener(
                new AuditAnchor.Listener() {
                  @Override
                  public void mismatch(AuditAnchor kept, String problem) {
                    trail.anchorMismatch(kept.seq(), kept.mac(), problem);
                  }

                  @Override
                  public void reset(AuditAnchor dropped, String record) {
                    trail.anchorReset(
                        dropped == null ? 0 : dropped.seq(),
                        dropped == null ? null : dropped.mac(),
                        String.valueOf(record));
                  }
                }));
  }

  private static void grants(AuditLog log, int n) {
    AuditTrail trail = new AuditTrail(log);
    for (int i = 0; i < n; i++) {
      trail.peerAuthenticated("srdma://acme/p" + i, "acme", true, null);
    }
  }

  private AuditAnchor awaitAnchored(long seq) {
    Await.until(
        Duration.ofSeconds(10),
        "audit head " + seq + " anchored",
        () -> {
          AuditAnchor a = AuditAnchor.read(console, "h1");
          return a != null && a.seq() == seq;
        });
    return AuditAnchor.read(console, "h1");
  }

  /** Runs a host on the log until its head is anchored; returns the anchor. */
  private AuditAnchor runUntilAnchored(AuditLog log) {
    try (ClusterNode n = node(log)) {
      AuditAnchor a = awaitAnchored(log.sequence());
      assertEquals(log.head(), a.mac());
      Await.until(
          Duration.ofSeconds(5), "connected", () -> n.state() == ClusterNode.State.CONNECTED);
      return a;
    }
  }

  private static void awaitHeld(ClusterNode n, long seq) {
    Await.until(
        Duration.ofSeconds(10),
        "the node reports the kept anchor",
        () ->
            n.state() == ClusterNode.State.DEGRADED
                && n.status().lastError() != null
                && n.status()
                    .lastError()
                    .contains(
                        "the audit log no longer holds the line anchored in etcd (seq "
                            + seq
                            + ")"));
  }

  @Test
  void shouldKeepTheAnchorOfACutLogAcrossARestartUntilAnOperatorResetsIt() throws Exception {
    AuditLog log = AuditLog.open(file);
    grants(log, 10);
    runUntilAnchored(log);
    // an honest restart: the log intact and grown; anchoring goes on
    log.close();
    log = AuditLog.open(file);
    grants(log, 2);
    AuditAnchor before = runUntilAnchored(log);
    log.close();

    // while the host is down, someone who can write the log cuts its tail at a line boundary
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    Files.write(file, lines.subList(0, 4), StandardCharsets.UTF_8);
    log = AuditLog.open(file); // resume accepts the shorter chain
    grants(log, 1);
    try (ClusterNode n = node(log)) {
      awaitHeld(n, before.seq());
      Thread.sleep(2 * ClusterNode.ANCHOR_PERIOD.toMillis());
      assertEquals(before, AuditAnchor.read(console, "h1"), "the old anchor is kept");
      assertEquals(ClusterNode.State.DEGRADED, n.state());
      // the mismatch is in the host's own audit log
      String text = Files.readString(file);
      assertTrue(
          text.contains("\"action\":\"anchor\",\"outcome\":\"failure\"")
              && text.contains("anchored seq " + before.seq()),
          text);
      // verify against etcd still shows the cut
      AuditVerification cut;
      try (AuditKey key = AuditKey.load(AuditKey.defaultFile(file))) {
        cut =
            new AuditVerifier(key, null)
                .verify(List.of(file), AuditVerifier.Head.parse(before.head()), false);
      }
      assertFalse(cut.intact(), cut.summary());

      // the operator's reset: refused for the wrong seq or a bad reason, then done
      assertThrows(
          ClusterException.class,
          () -> AuditAnchor.reset(console, "h1", before.seq() + 1, "wrong seq", Instant.now()));
      assertThrows(
          ClusterException.class,
          () -> AuditAnchor.reset(console, "h1", before.seq(), "bad \"reason\"", Instant.now()));
      AuditAnchor dropped =
          AuditAnchor.reset(console, "h1", before.seq(), "INC-1 accepted cut", Instant.now());
      assertEquals(before, dropped);
      String record = AuditAnchor.readReset(console, "h1");
      assertNotNull(record);
      assertTrue(record.contains("\"seq\":" + before.seq()) && record.contains("INC-1"), record);
      AuditLog live = log;
      Await.until(
          Duration.ofSeconds(10),
          "the reset recorded and the current head anchored",
          () -> {
            AuditAnchor a = AuditAnchor.read(console, "h1");
            return a != null
                && a.seq() == live.sequence()
                && a.mac().equals(live.head())
                && n.state() == ClusterNode.State.CONNECTED;
          });
      String after = Files.readString(file);
      assertTrue(
          after.contains("\"action\":\"anchor\",\"outcome\":\"success\"")
              && after.contains("anchor-reset")
              && after.contains("INC-1"),
          after);
      AuditAnchor now = AuditAnchor.read(console, "h1");
      AuditVerification ok;
      try (AuditKey key = AuditKey.load(AuditKey.defaultFile(file))) {
        ok =
            new AuditVerifier(key, null)
                .verify(List.of(file), AuditVerifier.Head.parse(now.head()), false);
      }
      assertTrue(ok.intact(), ok.summary());
    } finally {
      log.close();
    }
  }

  @Test
  void shouldKeepTheAnchorWhenTheActiveFileWasDeleted() throws Exception {
    // small files: rotated files beside the active one
    AuditLog log = AuditLog.open(file, 2048, java.time.Clock.systemUTC());
    grants(log, 30);
    AuditAnchor before = runUntilAnchored(log);
    log.close();
    Files.delete(file); // the active file, while the host is down
    log = AuditLog.open(file, 2048, java.time.Clock.systemUTC()); // a "continued" genesis
    try (ClusterNode n = node(log)) {
      awaitHeld(n, before.seq());
      assertEquals(before, AuditAnchor.read(console, "h1"));
    } finally {
      log.close();
    }
    List<Path> files;
    try (var s = Files.list(file.getParent())) {
      files = s.filter(f -> f.getFileName().toString().startsWith("audit.log")).toList();
    }
    AuditVerification alone = new AuditVerifier(null, null).verify(files, null, false);
    assertTrue(alone.intact(), alone.summary());
    assertTrue(alone.summary().contains("continued at seq"), alone.summary());
    AuditVerification anchored;
    try (AuditKey key = AuditKey.load(AuditKey.defaultFile(file))) {
      anchored =
          new AuditVerifier(key, null)
              .verify(files, AuditVerifier.Head.parse(before.head()), false);
    }
    assertFalse(anchored.intact(), anchored.summary());
  }

  @Test
  void shouldNotOverwriteAnAnchorAnotherProcessWrote() throws Exception {
    AuditLog log = AuditLog.open(file);
    grants(log, 3);
    try (ClusterNode n = node(log)) {
      AuditAnchor mine = awaitAnchored(log.sequence());
      // another process claiming h1 writes its own anchor
      AuditAnchor foreign = new AuditAnchor("h1", mine.seq() + 5, "cd".repeat(32), Instant.now());
      console.await(
          console
              .client()
              .getKVClient()
              .put(console.keys().auditHead("h1"), ByteSequence.from(foreign.toJson())),
          "foreign anchor");
      grants(log, 1); // the head moves: the next anchor's compare-and-swap fails
      awaitHeld(n, foreign.seq());
      Thread.sleep(2 * ClusterNode.ANCHOR_PERIOD.toMillis());
      assertEquals(foreign.seq(), AuditAnchor.read(console, "h1").seq());
      assertEquals(foreign.mac(), AuditAnchor.read(console, "h1").mac());
    } finally {
      log.close();
    }
  }
}
