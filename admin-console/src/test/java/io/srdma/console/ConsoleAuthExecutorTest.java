package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.Future;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A logged-in auditor floods light routes ({@code GET /api/sessions}) against a slow host (its
 * session list waits on a latch) until every thread of Vert.x's shared worker pool it may hold
 * ({@link LightWork#MAX_PER_USER}) waits in it and the rest of the flood queues. Logins, logouts
 * and an admin's revoke — on this host and on the fleet — must still be answered promptly: they run
 * on the console's own small pool (checked by the revoke's thread), never queued behind the light
 * routes.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class ConsoleAuthExecutorTest {
  /** Vert.x's shared worker pool, which the light routes use. */
  private static final int WORKERS = VertxOptions.DEFAULT_WORKER_POOL_SIZE;

  /** More light requests than the shared pool has threads: the rest queue there. */
  private static final int FLOOD = WORKERS + 12;

  /** Promptly: a login (an Argon2id hash) or a revoke with nothing queued in front of it. */
  private static final Duration PROMPT = Duration.ofSeconds(2);

  @TempDir Path dir;
  ConsoleFixture console;
  ConsoleClusterTest.FakeCluster cluster;
  WebClient client;
  final CountDownLatch release = new CountDownLatch(1);
  final CountDownLatch poolFull = new CountDownLatch(LightWork.MAX_PER_USER);
  final List<String> revokeThreads = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start(io.vertx.core.Vertx vertx) {
    cluster = new ConsoleClusterTest.FakeCluster();
    console = new ConsoleFixture(dir, new ConsoleConfig(), b -> b.cluster = cluster);
    client = console.client(vertx, 2 * FLOOD);
  }

  @AfterEach
  void stop() {
    release.countDown();
    console.backend.onSessionsRead = null;
    console.close();
  }

  private record Login(WebClientSession client, String csrf) {}

  private Future<HttpResponse<Buffer>> startLogin(String user, String password) {
    return WebClientSession.create(client)
        .post("/api/login")
        .sendJsonObject(new JsonObject().put("user", user).put("password", password));
  }

  private Login login(String user, String password) throws Exception {
    WebClientSession s = WebClientSession.create(client);
    HttpResponse<Buffer> r =
        await(
            s.post("/api/login")
                .sendJsonObject(new JsonObject().put("user", user).put("password", password)));
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return new Login(s, r.bodyAsJsonObject().getString("csrf"));
  }

  private static HttpResponse<Buffer> within(Future<HttpResponse<Buffer>> f, String what)
      throws Exception {
    try {
      return f.toCompletionStage()
          .toCompletableFuture()
          .get(PROMPT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return fail(
          what + " was not answered within " + PROMPT + " while light routes filled the pool");
    }
  }

  @Test
  void shouldServeLoginLogoutAndRevokeWhileLightRoutesHoldEveryWorker() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    Login leaving = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    Login flooder = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    console.backend.beforeRevoke = id -> revokeThreads.add(Thread.currentThread().getName());
    console.backend.onSessionsRead =
        () -> {
          poolFull.countDown();
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    List<Future<HttpResponse<Buffer>>> flood = new ArrayList<>();
    for (int i = 0; i < FLOOD; i++) {
      flood.add(flooder.client().get("/api/sessions").send());
    }
    assertTrue(
        poolFull.await(10, TimeUnit.SECONDS), "the light routes hold every shared worker they may");

    HttpResponse<Buffer> in =
        within(startLogin("admin", ConsoleFixture.ADMIN_PASSWORD), "an admin's login");
    assertEquals(200, in.statusCode(), in.bodyAsString());
    HttpResponse<Buffer> revoked =
        within(
            admin
                .client()
                .delete("/api/grants/g-1")
                .putHeader(AuthRoutes.CSRF_HEADER, admin.csrf())
                .send(),
            "an admin's revoke");
    assertEquals(200, revoked.statusCode(), revoked.bodyAsString());
    HttpResponse<Buffer> fleet =
        within(
            admin
                .client()
                .delete("/api/cluster/grants/h1/1")
                .putHeader(AuthRoutes.CSRF_HEADER, admin.csrf())
                .send(),
            "an admin's fleet revoke");
    assertEquals(200, fleet.statusCode(), fleet.bodyAsString());
    HttpResponse<Buffer> out =
        within(
            leaving
                .client()
                .post("/api/logout")
                .putHeader(AuthRoutes.CSRF_HEADER, leaving.csrf())
                .send(),
            "a logout");
    assertEquals(204, out.statusCode(), out.bodyAsString());
    assertTrue(console.backend.revokedBy.contains("g-1 by admin"));
    assertEquals(1, revokeThreads.size(), "the host's revoke ran once: " + revokeThreads);
    for (String t : revokeThreads) {
      assertTrue(t.startsWith(ConsoleVerticle.PROMPT_EXECUTOR), "revoke ran on " + t);
    }

    release.countDown();
    for (Future<HttpResponse<Buffer>> f : flood) {
      assertEquals(200, await(f).statusCode());
    }
  }
}
