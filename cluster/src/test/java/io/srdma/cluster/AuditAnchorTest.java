package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.AuditKey;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A host anchors its audit head in etcd; a log cut after the anchor no longer verifies. */
@Timeout(90)
class AuditAnchorTest {
  @TempDir Path dir;

  @Test
  void shouldAnchorTheAuditHeadSoACutLogIsDetected() throws Exception {
    Path file = dir.resolve("audit.log");
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"));
        EtcdLink console = EtcdLink.open(etcd.clientConfig("/srdma/a", null))) {
      AuditLog log = AuditLog.open(file);
      AuditTrail trail = new AuditTrail(log);
      for (int i = 0; i < 5; i++) {
        trail.peerAuthenticated("srdma://acme/p" + i, "acme", true, null);
      }
      try (ClusterNode node =
          ClusterNode.start(
              new ClusterNode.Options()
                  .config(etcd.clientConfig("/srdma/a", "h1"))
                  .host("h1")
                  .auditHead(AuditAnchor.headOf(log), AuditAnchor.chainOf(log))
                  .sessions(() -> 3))) {
        long seq = log.sequence();
        Await.until(
            Duration.ofSeconds(5),
            "the audit head anchored",
            () -> {
              AuditAnchor a = AuditAnchor.read(console, "h1");
              return a != null && a.seq() == seq;
            });
        assertEquals(ClusterNode.State.CONNECTED, node.state());
        // the session count for the fleet view, published beside the anchor
        Await.until(
            Duration.ofSeconds(5),
            "the session count published",
            () -> Integer.valueOf(3).equals(PolicyStatus.read(console).sessions().get("h1")));
      } finally {
        log.close();
      }
      AuditAnchor anchor = AuditAnchor.read(console, "h1");
      assertEquals(log.head(), anchor.mac());

      // a head is only evidence with the audit key (without it: AuditVerifier.UnprovenHead)
      AuditKey key = AuditKey.load(dir.resolve("audit.key"));
      AuditVerification intact =
          new AuditVerifier(key, null)
              .verify(List.of(file), AuditVerifier.Head.parse(anchor.head()), false);
      assertTrue(intact.intact(), intact.summary());

      // someone who can write the file cuts its last two lines: the chain alone looks fine, the
      // anchor in etcd does not
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      Files.write(file, lines.subList(0, lines.size() - 2), StandardCharsets.UTF_8);
      AuditVerification alone = new AuditVerifier(key, null).verify(List.of(file), null, false);
      assertTrue(alone.intact(), alone.summary());
      AuditVerification cut =
          new AuditVerifier(key, null)
              .verify(List.of(file), AuditVerifier.Head.parse(anchor.head()), false);
      key.close();
      assertFalse(cut.intact());
      assertEquals(AuditVerification.Finding.TRUNCATED, cut.finding(), cut.summary());
    }
  }
}
