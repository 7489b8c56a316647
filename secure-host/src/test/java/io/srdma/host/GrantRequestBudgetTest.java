package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.DenyReason;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Operations;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session's grant requests are budgeted: a peer pipelining requests gets GRANT_DENIED
 * RATE_LIMITED past the burst, and its denials cost the audit log a bounded number of lines.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GrantRequestBudgetTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @TempDir Path dir;
  ChannelRig rig;

  @AfterEach
  void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  @Test
  void shouldAllowTheBurstThenRefillAtTheRateAndNeverAboveTheBurst() {
    GrantRequestBudget b = new GrantRequestBudget(0);
    for (int i = 0; i < GrantRequestBudget.BURST; i++) {
      assertTrue(b.tryTake(0), "request " + i + " of the burst");
    }
    assertFalse(b.tryTake(0));
    long now = SECOND / 2; // half a second earns half the rate
    for (int i = 0; i < GrantRequestBudget.PER_SECOND / 2; i++) {
      assertTrue(b.tryTake(now), "earned request " + i);
    }
    assertFalse(b.tryTake(now));
    now += 3600 * SECOND; // an idle hour earns no more than one burst
    int taken = 0;
    while (b.tryTake(now)) {
      taken++;
    }
    assertEquals(GrantRequestBudget.BURST, taken);
  }

  @Test
  void shouldAuditOnlyTheFirstDenialsOfASession() {
    GrantRequestBudget b = new GrantRequestBudget(0);
    for (int i = 0; i < GrantRequestBudget.AUDITED_DENIALS; i++) {
      assertTrue(b.auditDenial());
    }
    assertFalse(b.auditDenial());
  }

  @Test
  void shouldRefusePipelinedRequestsPastTheBudgetWithABoundedAudit() throws Exception {
    rig = new ChannelRig(dir);
    int n = 2_000;
    try (RawPeer raw = new RawPeer(rig, "acme", "trainer-1")) {
      long decisionsBefore = decisions(rig.auditLog.file());
      Thread sender =
          new Thread(
              () -> {
                try {
                  for (int i = 1; i <= n; i++) {
                    raw.proxy.grantRequest(i, "nosuch", Operations.WRITE, 0, 4096, 1000);
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              },
              "test-grant-flood");
      long start = System.nanoTime();
      sender.start();
      int limited = 0;
      int decided = 0;
      for (int i = 0; i < n; i++) {
        Frame f = raw.reader.read().expect(MessageType.GRANT_DENIED);
        if (f.grantDenied().reason() == DenyReason.RATE_LIMITED) {
          limited++;
        } else {
          decided++;
        }
      }
      long seconds = (System.nanoTime() - start) / SECOND + 1;
      sender.join(10_000);
      assertTrue(
          decided <= GrantRequestBudget.BURST + GrantRequestBudget.PER_SECOND * seconds,
          decided + " requests decided in about " + seconds + " s");
      assertEquals(n, limited + decided);
      assertTrue(limited > 0, "past the burst, requests are refused as RATE_LIMITED");
      long added = decisions(rig.auditLog.file()) - decisionsBefore;
      assertEquals(GrantRequestBudget.AUDITED_DENIALS, added, n + " denials, audited decisions");

      // the budget refills: after a pause the session is served again
      Thread.sleep(TimeUnit.NANOSECONDS.toMillis(SECOND * 4 / GrantRequestBudget.PER_SECOND));
      raw.proxy.grantRequest(n + 1, "kvcache", Operations.WRITE, 0, 4096, 60_000);
      raw.reader.read().expect(MessageType.GRANT);
    }
  }

  private static long decisions(Path file) throws Exception {
    return Files.readString(file, StandardCharsets.UTF_8)
        .lines()
        .filter(l -> l.contains("\"action\":\"decide\""))
        .count();
  }
}
