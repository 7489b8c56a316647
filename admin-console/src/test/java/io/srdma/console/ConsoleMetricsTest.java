package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import io.srdma.channel.record.AeadException;
import io.srdma.channel.record.AeadPlan;
import io.srdma.channel.record.AeadProvider;
import io.srdma.channel.record.AeadRates;
import io.srdma.channel.record.AeadSelection;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The host's enforcement and pre-authentication counters reach {@code /metrics}. */
class ConsoleMetricsTest {
  @Test
  void shouldExportTheEnforcementAndPreAuthenticationCounters() {
    String text =
        new ConsoleMetrics()
            .scrape(
                new ConsoleStats(1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18),
                List.of());
    for (String line :
        List.of(
            "srdma_notifications_stale_total 11.0",
            "srdma_sessions_terminated_total 12.0",
            "srdma_handshake_deadlines_total 13.0",
            "srdma_responder_refusals_total 14.0",
            "srdma_connections_rate_limited_total 15.0",
            "srdma_quota_refusals_total 16.0",
            "srdma_receive_credit_writes_total 17.0",
            "srdma_receive_credits_deferred_total 18.0",
            "srdma_auth_failures_total 9.0")) {
      assertTrue(text.lines().anyMatch(line::equals), line + " in\n" + text);
    }
  }

  @Test
  void shouldExportTheDataPathAeadAndItsRates() {
    AeadProvider jdk = AeadProvider.jdk();
    AeadSelection.Choice choice =
        new AeadSelection.Choice(
            jdk,
            AeadSelection.Mode.AUTO,
            "auto: the only candidate",
            List.of(
                new AeadRates("jdk", List.of(new AeadRates.Rate(65536, 4200.5, 4400.25))),
                new AeadRates("accp", List.of(new AeadRates.Rate(65536, 9400, 9100)))),
            null);
    String text =
        new ConsoleMetrics(() -> choice)
            .scrape(new ConsoleStats(0, 0, 0, 0, 0, 0, 0, 0, 0), List.of());
    assertTrue(
        text.lines()
            .anyMatch(
                l ->
                    l.startsWith("srdma_aead_info{")
                        && l.contains("provider=\"jdk\"")
                        && l.contains("mode=\"auto\"")
                        && l.contains("records=\"all\"")
                        && l.matches(".*\\} 1(\\.0)?")),
        text);
    for (String line :
        List.of(
            "srdma_aead_seal_mbps{provider=\"jdk\",record_size=\"65536\"} 4200.5",
            "srdma_aead_open_mbps{provider=\"jdk\",record_size=\"65536\"} 4400.25",
            "srdma_aead_seal_mbps{provider=\"accp\",record_size=\"65536\"} 9400.0")) {
      assertTrue(text.lines().anyMatch(line::equals), line + " in\n" + text);
    }
  }

  @Test
  void shouldExportBothProvidersOfASplitPlanAndWhichRecordsEachSeals() {
    AeadProvider jdk = AeadProvider.jdk();
    AeadProvider accp;
    try {
      accp = AeadProvider.accp();
    } catch (AeadException e) {
      abort("ACCP does not load here, and a split plan needs a second provider: " + e.getMessage());
      return;
    }
    AeadSelection.Choice choice =
        new AeadSelection.Choice(
            AeadPlan.split(accp, jdk, 4096),
            AeadSelection.Mode.AUTO,
            "auto: test",
            List.of(),
            null,
            null,
            null);
    String text =
        new ConsoleMetrics(() -> choice)
            .scrape(new ConsoleStats(0, 0, 0, 0, 0, 0, 0, 0, 0), List.of());
    for (String[] want : new String[][] {{"accp", "under 4096"}, {"jdk", "from 4096"}}) {
      assertTrue(
          text.lines()
              .anyMatch(
                  l ->
                      l.startsWith("srdma_aead_info{")
                          && l.contains("provider=\"" + want[0] + "\"")
                          && l.contains("records=\"" + want[1] + "\"")),
          String.join(" ", want) + " in\n" + text);
    }
  }
}
