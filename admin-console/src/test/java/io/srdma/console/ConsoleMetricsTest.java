package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The host's enforcement and pre-authentication counters reach {@code /metrics}. */
class ConsoleMetricsTest {
  @Test
  void shouldExportTheEnforcementAndPreAuthenticationCounters() {
    String text =
        new ConsoleMetrics()
            .scrape(new ConsoleStats(1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16), List.of());
    for (String line :
        List.of(
            "srdma_notifications_stale_total 11.0",
            "srdma_sessions_terminated_total 12.0",
            "srdma_handshake_deadlines_total 13.0",
            "srdma_responder_refusals_total 14.0",
            "srdma_connections_rate_limited_total 15.0",
            "srdma_quota_refusals_total 16.0",
            "srdma_auth_failures_total 9.0")) {
      assertTrue(text.lines().anyMatch(line::equals), line + " in\n" + text);
    }
  }
}
