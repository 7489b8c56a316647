package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A logged-in auditor floods a light route ({@code GET /api/sessions}) while the host is slow (its
 * session list waits on a latch), with more requests than Vert.x's shared worker pool has threads.
 * The flood holds at most {@link LightWork#MAX_PER_USER} of those threads; the rest of it waits in
 * the auditor's own queue, so another user's light requests are still served while it lasts, and
 * the flood itself is served once the host answers.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class ConsoleLightWorkTest {
  private static final int WORKERS = VertxOptions.DEFAULT_WORKER_POOL_SIZE;
  private static final int FLOOD = WORKERS + 12;

  /** Bound on each wait; before the fix the admin's answer never comes while the flood is held. */
  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir Path dir;
  ConsoleFixture console;
  WebClient client;
  final CountDownLatch release = new CountDownLatch(1);
  final AtomicInteger stuck = new AtomicInteger();

  @BeforeEach
  void start(io.vertx.core.Vertx vertx) {
    console = new ConsoleFixture(dir);
    client = console.client(vertx, 2 * FLOOD);
  }

  @AfterEach
  void stop() {
    release.countDown();
    console.backend.onSessionsRead = null;
    console.close();
  }

  private WebClientSession login(String user, String password) throws Exception {
    WebClientSession s = WebClientSession.create(client);
    HttpResponse<Buffer> r =
        await(
            s.post("/api/login")
                .sendJsonObject(new JsonObject().put("user", user).put("password", password)));
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return s;
  }

  @Test
  void shouldServeOtherUsersWhileOneUsersLightRequestsWaitOnASlowHost() throws Exception {
    WebClientSession admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    WebClientSession flooder = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    console.backend.onSessionsRead =
        () -> {
          stuck.incrementAndGet();
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            stuck.decrementAndGet();
          }
        };
    List<Future<HttpResponse<Buffer>>> flood = new ArrayList<>();
    for (int i = 0; i < FLOOD; i++) {
      flood.add(flooder.get("/api/sessions").send());
    }
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (stuck.get() < LightWork.MAX_PER_USER && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(LightWork.MAX_PER_USER, stuck.get(), "the auditor's light requests running");

    // before the fix the flood holds every shared worker and this waits behind it
    HttpResponse<Buffer> stats;
    try {
      stats =
          admin
              .get("/api/stats")
              .send()
              .toCompletionStage()
              .toCompletableFuture()
              .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      stats = fail("the admin's stats were not answered while the auditor's flood waited");
    }
    assertEquals(200, stats.statusCode(), stats.bodyAsString());
    assertEquals(
        LightWork.MAX_PER_USER, stuck.get(), "the flood never holds more of the shared pool");

    release.countDown();
    for (Future<HttpResponse<Buffer>> f : flood) {
      assertEquals(200, await(f).statusCode());
    }
  }
}
