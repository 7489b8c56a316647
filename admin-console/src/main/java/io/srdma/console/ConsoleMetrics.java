package io.srdma.console;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.function.ToDoubleFunction;

/**
 * Prometheus metrics: the host's counters (read from one {@link ConsoleStats} snapshot taken per
 * scrape) and the console's own (logins, revocations, reloads).
 */
final class ConsoleMetrics {
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private volatile ConsoleStats snapshot = new ConsoleStats(0, 0, 0, 0, 0, 0, 0, 0, 0);
  final Counter loginSuccess;
  final Counter loginFailure;
  final Counter loginRateLimited;
  final Counter revocations;
  final Counter reloadsApplied;
  final Counter reloadsRejected;

  ConsoleMetrics() {
    counter("srdma.bytes.moved", "payload bytes moved under grants", ConsoleStats::bytesMoved);
    counter("srdma.records.opened", "sealed records opened", ConsoleStats::recordsOpened);
    counter("srdma.records.rejected", "sealed records refused", ConsoleStats::recordsRejected);
    counter("srdma.operations", "grant requests plus records", ConsoleStats::operations);
    counter("srdma.denials", "grant requests the policy denied", ConsoleStats::denials);
    counter(
        "srdma.remote.access.errors",
        "accesses outside a grant, unknown rkeys",
        ConsoleStats::remoteAccessErrors);
    counter("srdma.auth.failures", "failed peer authentications", ConsoleStats::authFailures);
    gauge("srdma.sessions", "live sessions", ConsoleStats::sessions);
    gauge("srdma.grants.live", "live grants", ConsoleStats::liveGrants);
    loginSuccess = login("success");
    loginFailure = login("failure");
    loginRateLimited = login("rate_limited");
    revocations =
        Counter.builder("srdma.console.revocations")
            .description("grants revoked from the console")
            .register(registry);
    reloadsApplied = reload("applied");
    reloadsRejected = reload("rejected");
  }

  /** Takes a new snapshot of the host's counters; call before {@link #scrape()}. */
  void update(ConsoleStats stats) {
    snapshot = stats;
  }

  String scrape() {
    return registry.scrape();
  }

  void close() {
    registry.close();
  }

  private void counter(String name, String help, ToDoubleFunction<ConsoleStats> f) {
    FunctionCounter.builder(name, this, m -> f.applyAsDouble(m.snapshot))
        .description(help)
        .register(registry);
  }

  private void gauge(String name, String help, ToDoubleFunction<ConsoleStats> f) {
    Gauge.builder(name, this, m -> f.applyAsDouble(m.snapshot))
        .description(help)
        .register(registry);
  }

  private Counter login(String outcome) {
    return Counter.builder("srdma.console.logins")
        .description("console login attempts")
        .tag("outcome", outcome)
        .register(registry);
  }

  private Counter reload(String outcome) {
    return Counter.builder("srdma.console.reloads")
        .description("policy reloads from the console")
        .tag("outcome", outcome)
        .register(registry);
  }
}
