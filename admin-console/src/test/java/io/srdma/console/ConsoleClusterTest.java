package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet view of a clustered host ({@code /api/cluster}, docs/cluster.md) and its link state on
 * {@code /metrics}; a single host's console says it is not clustered and is otherwise unchanged.
 */
@ExtendWith(VertxExtension.class)
class ConsoleClusterTest {
  private static final String TOKEN = "metrics-token-0123456789abcdef0123456789";

  @TempDir Path dir;

  /** Two hosts, h1 degraded, three grants; revocations recorded. */
  static final class FakeCluster implements ClusterView {
    final Map<String, ClusterView.FleetGrant> grants = new ConcurrentHashMap<>();
    volatile boolean connected = false;
    volatile long silent = 2;

    /** Thrown by the next revoke, if set (etcd down, the host did not confirm). */
    volatile RuntimeException revokeFails;

    /** The next revoke finds the grant gone (it ended between listing and revoking). */
    volatile boolean revokeFindsNothing;

    FakeCluster() {
      for (long id : new long[] {1, 2}) {
        add(new FleetGrant("h1", id, "acme", "srdma://acme/t", "kvcache", 0, 4096, "write", at()));
      }
      add(new FleetGrant("h2", 9, "acme", "srdma://acme/u", "kvcache", 0, 64, "read", at()));
    }

    private void add(FleetGrant g) {
      grants.put(g.host() + "/" + g.grantId(), g);
    }

    private static Instant at() {
      return Instant.parse("2030-01-01T00:00:00Z");
    }

    @Override
    public Link link() {
      return new Link(
          "h1", "/srdma/prod", connected, at(), connected ? null : "etcd did not answer", 3);
    }

    @Override
    public Map<String, Long> policyRefusals() {
      return Map.of("unsigned", 1L, "rollback", 2L);
    }

    @Override
    public long silentWatches() {
      return silent;
    }

    @Override
    public String deploymentPolicySha256() {
      return "a".repeat(64);
    }

    @Override
    public List<FleetHost> hosts() {
      return List.of(
          new FleetHost(
              "h1",
              "a".repeat(64),
              7,
              at(),
              true,
              4,
              3,
              new PolicyRefusal("rollback", 41, Instant.parse("2030-01-01T00:01:00Z"))),
          new FleetHost("h2", "b".repeat(64), 5, at(), false, -1));
    }

    @Override
    public List<FleetGrant> grants() {
      return List.copyOf(grants.values());
    }

    @Override
    public boolean revoke(String host, long grantId) {
      RuntimeException e = revokeFails;
      if (e != null) {
        revokeFails = null;
        throw e;
      }
      if (revokeFindsNothing) {
        revokeFindsNothing = false;
        return false;
      }
      return grants.remove(host + "/" + grantId) != null;
    }
  }

  private static String csrfLogin(WebClientSession s, String user, String password)
      throws Exception {
    HttpResponse<Buffer> r =
        send(
            s,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", user).put("password", password),
            null);
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return r.bodyAsJsonObject().getString("csrf");
  }

  @Test
  void shouldShowTheFleetRevokeAcrossHostsAndExportTheLinkState(Vertx vertx) throws Exception {
    FakeCluster cluster = new FakeCluster();
    try (ConsoleFixture console =
        new ConsoleFixture(
            dir, new ConsoleConfig().metricsToken(TOKEN.toCharArray()), b -> b.cluster = cluster)) {
      WebClient c = console.client(vertx);
      WebClientSession admin = WebClientSession.create(c);
      String csrf = csrfLogin(admin, "admin", ConsoleFixture.ADMIN_PASSWORD);

      JsonObject fleet = send(admin, HttpMethod.GET, "/api/cluster", null, csrf).bodyAsJsonObject();
      assertTrue(fleet.getBoolean("clustered"), fleet.encode());
      assertEquals("degraded", fleet.getJsonObject("link").getString("state"), fleet.encode());
      // the watches this host found silent since it started, read at each request
      assertEquals(2, fleet.getJsonObject("link").getLong("silentWatches"), fleet.encode());
      assertEquals(2, fleet.getJsonArray("hosts").size());
      JsonObject h1 = fleet.getJsonArray("hosts").getJsonObject(0);
      assertEquals("h1", h1.getString("host"));
      assertEquals(2, h1.getLong("liveGrants"));
      assertEquals(4, h1.getInteger("sessions"));
      assertEquals(null, fleet.getJsonArray("hosts").getJsonObject(1).getInteger("sessions"));
      // the last policy a host refused, fleet-wide
      assertEquals(3, h1.getLong("policyRefusals"));
      JsonObject last = h1.getJsonObject("lastPolicyRefusal");
      assertEquals("rollback", last.getString("reason"), fleet.encode());
      assertEquals(41, last.getLong("serial"));
      assertEquals("2030-01-01T00:01:00Z", last.getString("at"));
      JsonObject h2 = fleet.getJsonArray("hosts").getJsonObject(1);
      assertEquals(0, h2.getLong("policyRefusals"));
      assertEquals(null, h2.getJsonObject("lastPolicyRefusal"));

      assertEquals(
          3,
          send(admin, HttpMethod.GET, "/api/cluster/grants", null, csrf)
              .bodyAsJsonObject()
              .getJsonArray("items")
              .size());

      // an auditor may look but not revoke
      WebClientSession auditor = WebClientSession.create(c);
      String auditorCsrf = csrfLogin(auditor, "auditor", ConsoleFixture.AUDITOR_PASSWORD);
      assertError(
          send(auditor, HttpMethod.DELETE, "/api/cluster/grants/h2/9", null, auditorCsrf),
          403,
          "forbidden");
      // an admin revokes a grant of another host
      HttpResponse<Buffer> r =
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h2/9", null, csrf);
      assertEquals(200, r.statusCode(), r.bodyAsString());
      assertTrue(!cluster.grants.containsKey("h2/9"));
      JsonObject revokeLine =
          java.nio.file.Files.readAllLines(console.log.file()).stream()
              .map(JsonObject::new)
              .filter(l -> "revoke".equals(l.getString("action")))
              .filter(l -> "h2/9".equals(l.getString("grant")))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no revoke line for h2/9"));
      assertEquals("admin", revokeLine.getString("actor"));
      assertEquals("success", revokeLine.getString("outcome"));
      assertEquals("console", revokeLine.getString("reason"));
      assertEquals("srdma://acme/u", revokeLine.getString("peer"));
      assertError(
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h2/9", null, csrf), 404, "not_found");

      String metrics =
          await(c.get("/metrics").putHeader("Authorization", "Bearer " + TOKEN).send())
              .bodyAsString();
      assertTrue(metrics.lines().anyMatch("srdma_cluster_connected 0.0"::equals), metrics);
      assertTrue(
          metrics.lines().anyMatch("srdma_cluster_degraded_episodes_total 3.0"::equals), metrics);
      // watches found silent, read at each scrape
      assertTrue(
          metrics.lines().anyMatch("srdma_cluster_silent_watches_total 2.0"::equals), metrics);
      assertTrue(
          metrics
              .lines()
              .anyMatch(
                  l ->
                      l.startsWith("# HELP srdma_cluster_silent_watches_total ")
                          && l.contains("silent")),
          metrics);
      assertTrue(
          metrics.lines().anyMatch("# TYPE srdma_cluster_silent_watches_total counter"::equals),
          metrics);
      // refused pushed policies by reason, every reason exported (0 until one happens)
      for (String line :
          List.of(
              "srdma_cluster_policy_refusals_total{reason=\"unsigned\"} 1.0",
              "srdma_cluster_policy_refusals_total{reason=\"rollback\"} 2.0",
              "srdma_cluster_policy_refusals_total{reason=\"other_ca\"} 0.0",
              "srdma_cluster_policy_refusals_total{reason=\"foreign_deployment\"} 0.0",
              "srdma_cluster_policy_refusals_total{reason=\"invalid\"} 0.0")) {
        assertTrue(metrics.lines().anyMatch(line::equals), line + " in\n" + metrics);
      }
      cluster.connected = true;
      cluster.silent = 5;
      metrics =
          await(c.get("/metrics").putHeader("Authorization", "Bearer " + TOKEN).send())
              .bodyAsString();
      assertTrue(metrics.lines().anyMatch("srdma_cluster_connected 1.0"::equals), metrics);
      assertTrue(
          metrics.lines().anyMatch("srdma_cluster_silent_watches_total 5.0"::equals), metrics);
      JsonObject again = send(admin, HttpMethod.GET, "/api/cluster", null, csrf).bodyAsJsonObject();
      assertEquals(5, again.getJsonObject("link").getLong("silentWatches"), again.encode());
      assertEquals("connected", again.getJsonObject("link").getString("state"), again.encode());
    }
  }

  private static List<JsonObject> revokeLines(ConsoleFixture console, String grant)
      throws Exception {
    return java.nio.file.Files.readAllLines(console.log.file()).stream()
        .map(JsonObject::new)
        .filter(l -> "revoke".equals(l.getString("action")))
        .filter(l -> grant.equals(l.getString("grant")))
        .toList();
  }

  @Test
  void shouldAuditAFailedFleetRevokeAsAFailureNotASuccess(Vertx vertx) throws Exception {
    FakeCluster cluster = new FakeCluster();
    try (ConsoleFixture console =
        new ConsoleFixture(dir, new ConsoleConfig(), b -> b.cluster = cluster)) {
      WebClientSession admin = WebClientSession.create(console.client(vertx));
      String csrf = csrfLogin(admin, "admin", ConsoleFixture.ADMIN_PASSWORD);

      // etcd unreachable, or the other host did not confirm within its wait: 500, a failure line
      cluster.revokeFails = new IllegalStateException("host h2 did not revoke grant 9 within 5 s");
      assertError(
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h2/9", null, csrf), 500, "internal");
      List<JsonObject> lines = revokeLines(console, "h2/9");
      assertEquals(1, lines.size(), lines.toString());
      assertEquals("failure", lines.get(0).getString("outcome"), lines.toString());
      assertEquals("admin", lines.get(0).getString("actor"));
      assertEquals("console", lines.get(0).getString("reason"));
      assertTrue(
          lines.get(0).getString("detail").contains("did not revoke grant 9 within 5 s"),
          lines.toString());

      // the grant was listed but had ended when the revoke came: 404, a failure line
      cluster.revokeFindsNothing = true;
      assertError(
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h1/1", null, csrf), 404, "not_found");
      lines = revokeLines(console, "h1/1");
      assertEquals(1, lines.size(), lines.toString());
      assertEquals("failure", lines.get(0).getString("outcome"), lines.toString());

      // no grant listed at all: nothing was attempted, no line
      assertError(
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h1/77", null, csrf),
          404,
          "not_found");
      assertEquals(List.of(), revokeLines(console, "h1/77"));

      // a revocation that happens: the success line comes after it, and only then
      HttpResponse<Buffer> ok =
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h2/9", null, csrf);
      assertEquals(200, ok.statusCode(), ok.bodyAsString());
      lines = revokeLines(console, "h2/9");
      assertEquals(2, lines.size(), lines.toString());
      assertEquals("success", lines.get(1).getString("outcome"), lines.toString());
      assertTrue(!cluster.grants.containsKey("h2/9"));
    }
  }

  @Test
  void shouldRevokeOnTheFleetEvenWhenTheAuditLineCannotBeWritten(Vertx vertx) throws Exception {
    FakeCluster cluster = new FakeCluster();
    try (ConsoleFixture console =
        new ConsoleFixture(dir, new ConsoleConfig(), b -> b.cluster = cluster)) {
      WebClientSession admin = WebClientSession.create(console.client(vertx));
      String csrf = csrfLogin(admin, "admin", ConsoleFixture.ADMIN_PASSWORD);
      // a full disk: the audit log has failed and refuses appends
      java.lang.reflect.Field failed = io.srdma.policy.AuditLog.class.getDeclaredField("failed");
      failed.setAccessible(true);
      failed.set(console.log, true);
      try {
        assertError(
            send(admin, HttpMethod.DELETE, "/api/cluster/grants/h1/1", null, csrf),
            500,
            "internal");
      } finally {
        failed.set(console.log, false);
      }
      // a revocation is never prevented by the audit log (the line comes after it, as on the
      // host): the grant is revoked, and the request fails because its line could not be written
      assertTrue(!cluster.grants.containsKey("h1/1"), "the audit log prevented a revocation");
      assertEquals(List.of(), revokeLines(console, "h1/1"));
    }
  }

  @Test
  void shouldSayASingleHostIsNotClustered(Vertx vertx) throws Exception {
    try (ConsoleFixture console =
        new ConsoleFixture(dir, new ConsoleConfig().metricsToken(TOKEN.toCharArray()))) {
      WebClient c = console.client(vertx);
      WebClientSession admin = WebClientSession.create(c);
      String csrf = csrfLogin(admin, "admin", ConsoleFixture.ADMIN_PASSWORD);
      assertEquals(
          new JsonObject().put("clustered", false),
          send(admin, HttpMethod.GET, "/api/cluster", null, csrf).bodyAsJsonObject());
      assertEquals(
          0,
          send(admin, HttpMethod.GET, "/api/cluster/grants", null, csrf)
              .bodyAsJsonObject()
              .getJsonArray("items")
              .size());
      assertError(
          send(admin, HttpMethod.DELETE, "/api/cluster/grants/h1/1", null, csrf), 404, "not_found");
      String metrics =
          await(c.get("/metrics").putHeader("Authorization", "Bearer " + TOKEN).send())
              .bodyAsString();
      assertTrue(metrics.lines().noneMatch(l -> l.startsWith("srdma_cluster")), metrics);
    }
  }
}
