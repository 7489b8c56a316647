package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
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
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two admins apply an edit of the same running policy at once: one wins, the other gets 409 {@code
 * conflict}, and the policy in force is the winner's (no lost update).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsolePolicyApplyRaceTest {
  /**
   * How long the first reload holds back for the second apply's base check. Without serialized
   * applies that check comes at once (both pass it); with them it cannot come before the first
   * apply is done, so the wait runs out and only delays the test.
   */
  private static final long RACE_WINDOW_SECONDS = 2;

  @TempDir Path dir;
  ConsoleFixture console;
  WebClient client;

  @BeforeEach
  void start(Vertx vertx) {
    console = new ConsoleFixture(dir);
    client = console.client(vertx);
  }

  @AfterEach
  void stop() {
    console.backend.onPolicyRead = null;
    console.backend.beforeReload = null;
    console.close();
  }

  /** A logged-in session and its CSRF token. */
  private record Login(WebClientSession client, String csrf) {}

  private Login login() throws Exception {
    WebClientSession s = WebClientSession.create(client);
    HttpResponse<Buffer> r =
        await(
            s.post("/api/login")
                .sendJsonObject(
                    new JsonObject()
                        .put("user", "admin")
                        .put("password", ConsoleFixture.ADMIN_PASSWORD)));
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return new Login(s, r.bodyAsJsonObject().getString("csrf"));
  }

  private static Future<HttpResponse<Buffer>> apply(Login l, String text, String base) {
    return l.client()
        .post("/api/policy/apply")
        .putHeader(AuthRoutes.CSRF_HEADER, l.csrf())
        .sendJsonObject(new JsonObject().put("text", text).put("base", base));
  }

  @Test
  void shouldLetOneOfTwoConcurrentAppliesOnTheSameBaseWinAndRefuseTheOther() throws Exception {
    Login first = login();
    Login second = login();
    String base = console.backend.policy().sha256();
    String running = console.backend.policyText();
    List<String> texts =
        List.of(running + "# edit by the first\n", running + "# edit by the second\n");

    // the base checks read the policy on a worker thread; the login checks on the event loop
    CountDownLatch baseChecks = new CountDownLatch(2);
    console.backend.onPolicyRead =
        () -> {
          if (!Context.isOnEventLoopThread()) {
            baseChecks.countDown();
          }
        };
    console.backend.beforeReload =
        () -> {
          try {
            baseChecks.await(RACE_WINDOW_SECONDS, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    Future<HttpResponse<Buffer>> a = apply(first, texts.get(0), base);
    Future<HttpResponse<Buffer>> b = apply(second, texts.get(1), base);
    List<HttpResponse<Buffer>> answers = List.of(await(a), await(b));
    console.backend.onPolicyRead = null;
    console.backend.beforeReload = null;

    List<Integer> winners =
        List.of(0, 1).stream().filter(i -> answers.get(i).statusCode() == 200).toList();
    assertEquals(
        1,
        winners.size(),
        "exactly one apply wins: "
            + answers.get(0).statusCode()
            + " "
            + answers.get(0).bodyAsString()
            + " / "
            + answers.get(1).statusCode()
            + " "
            + answers.get(1).bodyAsString());
    int winner = winners.get(0);
    assertError(answers.get(1 - winner), 409, "conflict");
    assertEquals(texts.get(winner), console.backend.policyText(), "the winner's text is in force");
    JsonObject won = answers.get(winner).bodyAsJsonObject();
    assertEquals(console.backend.policy().sha256(), won.getString("sha256"));
    assertEquals(base, won.getString("previousSha256"));
    assertTrue(!base.equals(won.getString("sha256")));
  }
}
