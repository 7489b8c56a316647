package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.PolicyLoader;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The event stream of a session ends when the session does (logout, a changed password, idle
 * expiry), within a few stream intervals (200 ms in the fixture) rather than at the stream's
 * 5-minute lifetime.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleStreamSessionTest {
  /** Far below the stream's lifetime, far above its 200 ms interval. */
  private static final long END_WITHIN_SECONDS = 10;

  @TempDir Path dir;
  ConsoleFixture console;
  WebClient client;
  HttpClient http;

  private void start(Vertx vertx, ConsoleConfig config) {
    console = new ConsoleFixture(dir, config);
    client = console.client(vertx);
    http = console.http(vertx);
  }

  @AfterEach
  void stop() throws Exception {
    if (http != null) {
      await(http.close());
    }
    if (console != null) {
      console.close();
    }
  }

  /** A logged-in session: its client, CSRF token and cookie. */
  private record Login(WebClientSession client, String csrf, String cookie) {}

  private Login login(String user, String password) throws Exception {
    WebClientSession s = WebClientSession.create(client);
    HttpResponse<Buffer> r =
        send(
            s,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", user).put("password", password),
            null);
    assertEquals(200, r.statusCode(), r.bodyAsString());
    String cookie =
        r.cookies().stream()
            .filter(c -> c.startsWith(ConsoleSessions.COOKIE + "="))
            .findFirst()
            .orElseThrow();
    return new Login(s, r.bodyAsJsonObject().getString("csrf"), cookie.split(";", 2)[0]);
  }

  /**
   * An open event stream: completes {@code firstEvent} on its first event, {@code ended} at end.
   */
  private record Stream(CompletableFuture<Void> firstEvent, CompletableFuture<Void> ended) {}

  private Stream open(Login login) throws Exception {
    CompletableFuture<Void> first = new CompletableFuture<>();
    CompletableFuture<Void> ended = new CompletableFuture<>();
    StringBuilder seen = new StringBuilder();
    var resp =
        await(
            http.request(
                    new RequestOptions()
                        .setHost("127.0.0.1")
                        .setPort(console.server.port())
                        .setURI("/api/stream")
                        .putHeader("Cookie", login.cookie()))
                .compose(
                    req ->
                        req.send()
                            .onSuccess(
                                r -> {
                                  r.handler(
                                      b -> {
                                        seen.append(b.toString(StandardCharsets.UTF_8));
                                        if (seen.indexOf("event: stats\n") >= 0) {
                                          first.complete(null);
                                        }
                                      });
                                  r.endHandler(v -> ended.complete(null));
                                  r.exceptionHandler(ended::completeExceptionally);
                                })));
    assertEquals(200, resp.statusCode());
    assertTrue(resp.getHeader("Content-Type").startsWith("text/event-stream"));
    first.get(END_WITHIN_SECONDS, TimeUnit.SECONDS);
    return new Stream(first, ended);
  }

  private void assertEndsPromptly(Stream s, Login login) throws Exception {
    // a TimeoutException here is the defect: the stream outlives its session
    s.ended().get(END_WITHIN_SECONDS, TimeUnit.SECONDS);
    HttpResponse<Buffer> again =
        await(client.get("/api/stream").putHeader("Cookie", login.cookie()).send());
    assertEquals(401, again.statusCode(), "the browser's reconnect is refused");
  }

  @Test
  void shouldEndTheStreamWhenItsSessionLogsOut(Vertx vertx) throws Exception {
    start(vertx, new ConsoleConfig());
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    Login other = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    Stream mine = open(auditor);
    Stream theirs = open(other);

    assertEquals(
        204,
        send(auditor.client(), HttpMethod.POST, "/api/logout", null, auditor.csrf()).statusCode());
    assertEndsPromptly(mine, auditor);
    // another session of the same user keeps its stream
    assertFalse(theirs.ended().isDone(), "the other session's stream ended too");
    assertEquals(200, send(other.client(), HttpMethod.GET, "/api/me", null, null).statusCode());
  }

  @Test
  void shouldEndTheStreamWhenItsUsersPasswordChanges(Vertx vertx) throws Exception {
    start(vertx, new ConsoleConfig());
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    Stream s = open(admin);

    String text = console.backend.policyText();
    String rotated =
        text.replace(
            ConsoleCredentialChangeTest.adminHash(text),
            ConsoleUsers.hashPassword("a-new-secret-password".toCharArray(), true));
    console.backend.reload(new PolicyLoader().parse("rotated.yaml", rotated), rotated, "operator");
    assertEndsPromptly(s, admin);
  }

  @Test
  void shouldEndTheStreamWhenItsSessionExpires(Vertx vertx) throws Exception {
    // the stream is no use of the session: with nothing else asked, it expires while streaming
    start(vertx, new ConsoleConfig().sessionTimeout(Duration.ofSeconds(2)));
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    Stream s = open(auditor);
    assertEndsPromptly(s, auditor);
  }
}
