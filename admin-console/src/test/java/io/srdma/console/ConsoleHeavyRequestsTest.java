package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
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
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * One logged-in auditor floods the heavy routes (audit pages, export and verify over a large log,
 * policy validate of a large text) from many connections at once. The fake host makes each of them
 * slow (its audit log path and policy text wait on a latch), so a flood holds whatever threads run
 * them. Logins and an admin's revoke must still be answered promptly, each session and user run at
 * most a few heavy requests at once, and the rest are refused at once with 429 {@code heavy_busy}.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class ConsoleHeavyRequestsTest {
  /** More heavy requests at once than Vert.x's default worker pool (20 threads) has threads. */
  private static final int FLOOD = 32;

  /** Promptly: a login (an Argon2id hash) or a revoke with nothing queued in front of it. */
  private static final Duration PROMPT = Duration.ofSeconds(2);

  /** How long the flood gets to be either running or answered; it needs far less. */
  private static final long SETTLE_SECONDS = 10;

  private static final List<String> HEAVY_GETS =
      List.of("/api/audit/verify", "/api/audit?limit=500", "/api/audit/export");

  @TempDir Path dir;
  ConsoleFixture console;
  WebClient client;
  final CountDownLatch release = new CountDownLatch(1);
  final AtomicInteger entered = new AtomicInteger();
  final List<String> threads = new CopyOnWriteArrayList<>();
  CountDownLatch settled;

  @BeforeEach
  void start(Vertx vertx) {
    console = new ConsoleFixture(dir);
    client = console.client(vertx, 2 * FLOOD);
  }

  @AfterEach
  void stop() {
    release.countDown();
    console.backend.onAuditLogRead = null;
    console.backend.onPolicyTextRead = null;
    console.close();
  }

  /** A logged-in session and its CSRF token. */
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

  private Login auditor() throws Exception {
    return login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
  }

  /** Makes every heavy route wait for {@link #release} once it runs, counting it in. */
  private void slowHost(int expected) {
    settled = new CountDownLatch(expected);
    Runnable slow =
        () -> {
          threads.add(Thread.currentThread().getName());
          entered.incrementAndGet();
          settled.countDown();
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    console.backend.onAuditLogRead = slow;
    console.backend.onPolicyTextRead = slow;
  }

  private Future<HttpResponse<Buffer>> heavy(Login l, int i) {
    Future<HttpResponse<Buffer>> f =
        i % 4 == 3
            ? l.client()
                .post("/api/policy/validate")
                .putHeader(AuthRoutes.CSRF_HEADER, l.csrf())
                .sendJsonObject(new JsonObject().put("text", FakeBackend.sampleText()))
            : l.client().get(HEAVY_GETS.get(i % 4)).send();
    return f.onComplete(ar -> settled.countDown());
  }

  private static HttpResponse<Buffer> within(Future<HttpResponse<Buffer>> f, String what)
      throws Exception {
    long t0 = System.nanoTime();
    try {
      HttpResponse<Buffer> r =
          f.toCompletionStage().toCompletableFuture().get(PROMPT.toMillis(), TimeUnit.MILLISECONDS);
      System.out.printf(
          "%s answered %d in %d ms%n",
          what, r.statusCode(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
      return r;
    } catch (TimeoutException e) {
      return fail(what + " was not answered within " + PROMPT + " while heavy requests ran");
    }
  }

  @Test
  void shouldServeLoginsAndRevokeAtOnceWhileOneAuditorFloodsTheHeavyRoutes() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    Login flooder = auditor();
    slowHost(FLOOD);
    List<Future<HttpResponse<Buffer>>> flood = new ArrayList<>();
    for (int i = 0; i < FLOOD; i++) {
      flood.add(heavy(flooder, i));
    }
    // each request of the flood either runs (and waits in the host) or is answered
    boolean allSettled = settled.await(SETTLE_SECONDS, TimeUnit.SECONDS);

    HttpResponse<Buffer> in =
        within(startLogin("admin", ConsoleFixture.ADMIN_PASSWORD), "an admin's login");
    assertEquals(200, in.statusCode(), in.bodyAsString());
    HttpResponse<Buffer> in2 =
        within(startLogin("auditor", ConsoleFixture.AUDITOR_PASSWORD), "an auditor's login");
    assertEquals(200, in2.statusCode(), in2.bodyAsString());
    HttpResponse<Buffer> revoked =
        within(
            admin
                .client()
                .delete("/api/grants/g-1")
                .putHeader(AuthRoutes.CSRF_HEADER, admin.csrf())
                .send(),
            "an admin's revoke");
    assertEquals(200, revoked.statusCode(), revoked.bodyAsString());
    assertTrue(console.backend.revokedBy.contains("g-1 by admin"));

    assertTrue(allSettled, "the flood settled: " + entered.get() + " running");
    assertEquals(HeavyWork.MAX_PER_SESSION, entered.get(), "heavy requests running at once");
    int refused = 0;
    for (Future<HttpResponse<Buffer>> f : flood) {
      if (f.isComplete()) {
        HttpResponse<Buffer> r = f.result();
        assertError(r, 429, "heavy_busy");
        assertNotNull(r.getHeader("Retry-After"));
        assertTrue(
            r.bodyAsJsonObject()
                .getString("message")
                .contains(HeavyWork.MAX_PER_SESSION + " heavy requests"),
            r.bodyAsString());
        refused++;
      }
    }
    assertEquals(FLOOD - HeavyWork.MAX_PER_SESSION, refused);
    for (String t : threads) {
      assertTrue(t.startsWith(HeavyWork.EXECUTOR), "heavy work ran on " + t);
    }

    // once the host answers, the admitted requests end and their places are free again
    release.countDown();
    for (Future<HttpResponse<Buffer>> f : flood) {
      assertTrue(List.of(200, 429).contains(await(f).statusCode()));
    }
    HttpResponse<Buffer> again = await(flooder.client().get("/api/audit/verify").send());
    assertEquals(200, again.statusCode(), again.bodyAsString());
  }

  @Test
  void shouldLimitTheHeavyRequestsOfOneUserAcrossItsSessions() throws Exception {
    List<Login> sessions = new ArrayList<>();
    int perSession = HeavyWork.MAX_PER_SESSION;
    int count = HeavyWork.MAX_PER_USER / perSession + 1;
    for (int i = 0; i < count; i++) {
      sessions.add(auditor());
    }
    slowHost(count * perSession);
    List<Future<HttpResponse<Buffer>>> all = new ArrayList<>();
    for (Login s : sessions) {
      for (int i = 0; i < perSession; i++) {
        all.add(heavy(s, 3)); // validate
      }
    }
    assertTrue(settled.await(SETTLE_SECONDS, TimeUnit.SECONDS), entered.get() + " running");
    assertEquals(HeavyWork.MAX_PER_USER, entered.get(), "heavy requests of one user at once");
    List<HttpResponse<Buffer>> refused =
        all.stream().filter(Future::isComplete).map(Future::result).toList();
    assertEquals(count * perSession - HeavyWork.MAX_PER_USER, refused.size());
    for (HttpResponse<Buffer> r : refused) {
      assertError(r, 429, "heavy_busy");
      assertTrue(
          r.bodyAsJsonObject().getString("message").contains("user 'auditor'"), r.bodyAsString());
    }
    release.countDown();
    for (Future<HttpResponse<Buffer>> f : all) {
      await(f);
    }
  }

  @Test
  void shouldGiveTheirPlaceBackWhenHeavyRequestsEndOrFail() throws Exception {
    Login l = auditor();
    for (int i = 0; i <= HeavyWork.MAX_PER_SESSION; i++) {
      HttpResponse<Buffer> r =
          await(
              l.client()
                  .post("/api/policy/validate")
                  .putHeader(AuthRoutes.CSRF_HEADER, l.csrf())
                  .putHeader("Content-Type", "application/json")
                  .sendBuffer(Buffer.buffer("{\"text\": ")));
      assertError(r, 400, "bad_json");
      r = await(l.client().get("/api/audit?from=yesterday").send());
      assertError(r, 400, "bad_request");
      r = await(l.client().get("/api/audit/export").send());
      assertEquals(200, r.statusCode(), r.bodyAsString());
    }
    HttpResponse<Buffer> ok = await(l.client().get("/api/audit/verify").send());
    assertEquals(200, ok.statusCode(), ok.bodyAsString());
  }
}
