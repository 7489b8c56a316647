package io.srdma.console;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.srdma.channel.record.AeadPlan;
import io.srdma.channel.record.AeadProvider;
import io.srdma.channel.record.AeadRates;
import io.srdma.channel.record.AeadSelection;
import io.srdma.verbs.doctor.DeviceCounter;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Prometheus metrics: the host's counters (read from one {@link ConsoleStats} snapshot taken per
 * scrape), the RDMA device's counters (read from sysfs per scrape, see {@link InfinibandNames}),
 * the data path's AEAD (which provider, its start-up rates) and the console's own (logins,
 * revocations, reloads).
 *
 * <p>Thread-safe: {@link #scrape} is synchronized, the counters are Micrometer's.
 */
final class ConsoleMetrics {
  /** At most this many device series, so that a strange sysfs tree cannot grow the registry. */
  static final int MAX_DEVICE_SERIES = 2048;

  /** One device series: its metric name, labels and the scale of the file's value. */
  private record DeviceKey(InfinibandNames.Name name, String device, String port) {}

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private volatile ConsoleStats snapshot = new ConsoleStats(0, 0, 0, 0, 0, 0, 0, 0, 0);
  private final Map<DeviceKey, FunctionCounter> deviceMeters = new HashMap<>();
  private volatile Map<DeviceKey, Double> deviceValues = Map.of();
  final Counter loginSuccess;
  final Counter loginFailure;
  final Counter loginRateLimited;
  final Counter revocations;
  final Counter reloadsApplied;
  final Counter reloadsRejected;
  final Counter responseWriteTimeouts;
  final Counter exportTimeouts;

  ConsoleMetrics() {
    this(AeadSelection::current);
  }

  /**
   * Metrics whose data-path AEAD series come from {@code aead} (the process's {@link
   * AeadSelection}; a test's choice).
   */
  ConsoleMetrics(Supplier<AeadSelection.Choice> aead) {
    registerAead(aead.get());
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
    counter(
        "srdma.notifications.stale",
        "write notifications naming an ended grant's slot",
        ConsoleStats::staleNotifications);
    counter(
        "srdma.sessions.terminated",
        "sessions the host ended (certificate revoked or expired, lifetime, rejected records)",
        ConsoleStats::sessionsTerminated);
    counter(
        "srdma.handshake.deadlines",
        "connections closed before authentication for a missed deadline",
        ConsoleStats::handshakeDeadlines);
    counter(
        "srdma.responder.refusals",
        "HELLOs naming a responder address that is not the peer's own",
        ConsoleStats::responderRefusals);
    counter(
        "srdma.connections.rate.limited",
        "connections refused by per-address limits before authentication",
        ConsoleStats::rateLimited);
    counter("srdma.quota.refusals", "sessions refused by quotas", ConsoleStats::quotaRefusals);
    counter(
        "srdma.receive.credit.writes",
        "receive credits written to clients (one per half receive depth reposted)",
        ConsoleStats::receiveCreditWrites);
    counter(
        "srdma.receive.credits.deferred",
        "receive credits that waited for a session's busy send queue",
        ConsoleStats::receiveCreditsDeferred);
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
    responseWriteTimeouts =
        Counter.builder("srdma.console.response.write.timeouts")
            .description("connections closed: their client took none of a response in time")
            .register(registry);
    exportTimeouts =
        Counter.builder("srdma.console.export.timeouts")
            .description("audit exports cut off: still sending at the export's maximum duration")
            .register(registry);
  }

  /**
   * The Prometheus text for this snapshot of the host's counters and these device counters. A
   * device series that is no longer read (its file went away or stopped parsing) is dropped rather
   * than reported stale.
   */
  synchronized String scrape(ConsoleStats stats, List<DeviceCounter> device) {
    snapshot = stats;
    Map<DeviceKey, Double> values = new HashMap<>();
    for (DeviceCounter c : device) {
      InfinibandNames.Name name = InfinibandNames.of(c);
      DeviceKey key = new DeviceKey(name, c.device(), Integer.toString(c.port()));
      if (values.size() < MAX_DEVICE_SERIES || values.containsKey(key)) {
        values.put(key, c.asDouble() * name.scale());
      }
    }
    deviceValues = values;
    for (Iterator<Map.Entry<DeviceKey, FunctionCounter>> it = deviceMeters.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<DeviceKey, FunctionCounter> e = it.next();
      if (!values.containsKey(e.getKey())) {
        registry.remove(e.getValue());
        it.remove();
      }
    }
    for (DeviceKey key : values.keySet()) {
      deviceMeters.computeIfAbsent(key, this::deviceMeter);
    }
    return registry.scrape();
  }

  /**
   * {@code srdma_aead_info{provider="accp",description="...",mode="auto",records="all"} 1} — one
   * per provider of the plan, {@code records} saying which: {@code all}, or {@code under 4096} and
   * {@code from 4096} — and every candidate's start-up seal and open rates by record size ({@code
   * srdma_aead_seal_mbps{provider,record_size}}).
   */
  private void registerAead(AeadSelection.Choice c) {
    AeadPlan plan = c.plan();
    if (plan.isSingle()) {
      aeadInfo(plan.small(), c, "all");
    } else {
      aeadInfo(plan.small(), c, "under " + plan.bulkFrom());
      aeadInfo(plan.bulk(), c, "from " + plan.bulkFrom());
    }
    for (AeadRates r : c.rates()) {
      for (AeadRates.Rate x : r.bySize()) {
        double seal = x.sealMBps();
        double open = x.openMBps();
        Gauge.builder("srdma.aead.seal.mbps", () -> seal)
            .description("AES-256-GCM seal rate on one core at start-up, 10^6 B/s")
            .tag("provider", r.provider())
            .tag("record_size", Integer.toString(x.size()))
            .register(registry);
        Gauge.builder("srdma.aead.open.mbps", () -> open)
            .description("AES-256-GCM open rate on one core at start-up, 10^6 B/s")
            .tag("provider", r.provider())
            .tag("record_size", Integer.toString(x.size()))
            .register(registry);
      }
    }
  }

  private void aeadInfo(AeadProvider p, AeadSelection.Choice c, String records) {
    Gauge.builder("srdma.aead.info", () -> 1)
        .description("the data path's AES-256-GCM providers (value 1), see srdma doctor")
        .tag("provider", p.name())
        .tag("description", p.description())
        .tag("mode", c.mode().label())
        .tag("records", records)
        .register(registry);
  }

  private FunctionCounter deviceMeter(DeviceKey key) {
    FunctionCounter.Builder<ConsoleMetrics> b =
        FunctionCounter.builder(
                key.name().meter(), this, m -> m.deviceValues.getOrDefault(key, 0.0))
            .description(key.name().help())
            .tag("device", key.device())
            .tag("port", key.port());
    if (key.name().counter() != null) {
      b.tag("counter", key.name().counter());
    }
    return b.register(registry);
  }

  /**
   * This host's link to its cluster's etcd: connected (1) or degraded (0), degraded episodes,
   * watches found silent; and the pushed policies it refused, by reason.
   */
  void cluster(ClusterView view) {
    Gauge.builder("srdma.cluster.connected", view, v -> v.link().connected() ? 1 : 0)
        .description("1 while etcd answers, 0 while degraded (serving on the last state applied)")
        .register(registry);
    FunctionCounter.builder(
            "srdma.cluster.degraded.episodes", view, v -> v.link().degradedEpisodes())
        .description("times this host lost etcd since it started")
        .register(registry);
    FunctionCounter.builder("srdma.cluster.silent.watches", view, ClusterView::silentWatches)
        .description(
            "watches this host found open but silent since it started (each watched again and"
                + " re-read)")
        .register(registry);
    for (String reason : ClusterView.POLICY_REFUSAL_REASONS) {
      FunctionCounter.builder(
              "srdma.cluster.policy.refusals",
              view,
              v -> v.policyRefusals().getOrDefault(reason, 0L))
          .description(
              "pushed policies this host refused since it started (the policy in force stayed)")
          .tag("reason", reason)
          .register(registry);
    }
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
