package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.assertError;
import static io.srdma.console.ConsoleApiTest.await;
import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.PolicyLoader;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A login session is bound to the credential it logged in with: changing a user's password hash in
 * the policy (the answer to a leaked password) ends the sessions made with the old one.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleCredentialChangeTest {
  private static final String NEW_PASSWORD = "a-new-secret-password";

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
    console.close();
  }

  /** A logged-in session and its CSRF token. */
  private record Login(WebClientSession client, String csrf) {}

  private HttpResponse<Buffer> tryLogin(String user, String password) throws Exception {
    return send(
        WebClientSession.create(client),
        HttpMethod.POST,
        "/api/login",
        new JsonObject().put("user", user).put("password", password),
        null);
  }

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
    return new Login(s, r.bodyAsJsonObject().getString("csrf"));
  }

  /** Puts a new hash of {@code password} for the admin user in force, as an operator would. */
  private String rehashAdmin(String password) {
    String text = console.backend.policyText();
    String oldHash = adminHash(text);
    String newHash = ConsoleUsers.hashPassword(password.toCharArray(), true);
    String rotated = text.replace(oldHash, newHash);
    console.backend.reload(new PolicyLoader().parse("rotated.yaml", rotated), rotated, "operator");
    return rotated;
  }

  /** The sample policy's admin hash: the first console user's. */
  static String adminHash(String text) {
    int admin = text.indexOf("    admin:\n");
    assertTrue(admin > 0, "no admin user in the sample policy");
    return text.substring(admin)
        .lines()
        .filter(l -> l.contains("password-hash:"))
        .findFirst()
        .orElseThrow()
        .replaceAll(".*\"(\\$shiro2[^\"]+)\".*", "$1");
  }

  @Test
  void shouldEndSessionsOfTheOldPasswordWhenThePasswordChanges() throws Exception {
    Login forMe = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    Login forApply = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    Login forMetrics = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    String rotated = rehashAdmin(NEW_PASSWORD);
    String sha = console.backend.policy().sha256();

    assertError(tryLogin("admin", ConsoleFixture.ADMIN_PASSWORD), 401, "bad_credentials");
    HttpResponse<Buffer> me = send(forMe.client(), HttpMethod.GET, "/api/me", null, null);
    assertError(me, 401, "not_authenticated");
    assertTrue(me.bodyAsJsonObject().getString("message").contains("changed"), me.bodyAsString());
    assertTrue(
        me.cookies().stream().anyMatch(c -> c.startsWith(ConsoleSessions.COOKIE + "=;")),
        "the ended session's cookie is cleared: " + me.cookies());
    // ended for good: a second request is refused too
    assertError(
        send(forMe.client(), HttpMethod.GET, "/api/me", null, null), 401, "not_authenticated");
    assertError(
        send(
            forApply.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", rotated + "# written with the old password\n"),
            forApply.csrf()),
        401,
        "not_authenticated");
    assertEquals(sha, console.backend.policy().sha256(), "nothing was applied");
    assertError(
        send(forMetrics.client(), HttpMethod.GET, "/metrics", null, null),
        401,
        "not_authenticated");

    // an unchanged user keeps its session; the new password logs in
    assertEquals(200, send(auditor.client(), HttpMethod.GET, "/api/me", null, null).statusCode());
    Login fresh = login("admin", NEW_PASSWORD);
    assertEquals(200, send(fresh.client(), HttpMethod.GET, "/api/me", null, null).statusCode());
    // no hash, old or new, reaches the audit log
    String log = Files.readString(console.log.file());
    assertFalse(log.contains("$shiro2$"), "a password hash in the audit log");
  }

  @Test
  void shouldEndSessionsWhenTheUserIsHashedAgainWithTheSamePassword() throws Exception {
    // removing a user and adding it back gives a new salted hash, even for the same password
    Login before = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    rehashAdmin(ConsoleFixture.ADMIN_PASSWORD);
    assertError(
        send(before.client(), HttpMethod.DELETE, "/api/grants/g-1", null, before.csrf()),
        401,
        "not_authenticated");
    assertTrue(console.backend.grants().stream().anyMatch(g -> g.grantId().equals("g-1")));
    Login after = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    HttpResponse<Buffer> r =
        send(after.client(), HttpMethod.DELETE, "/api/grants/g-1", null, after.csrf());
    assertEquals(200, r.statusCode(), r.bodyAsString());
  }

  @Test
  void shouldKeepSessionsAcrossReloadsThatLeaveTheUserAlone() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    String text = console.backend.policyText() + "# unrelated edit\n";
    HttpResponse<Buffer> r =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", text),
            admin.csrf());
    assertEquals(200, r.statusCode(), r.bodyAsString());
    assertEquals(200, send(admin.client(), HttpMethod.GET, "/api/me", null, null).statusCode());
    assertEquals(
        200,
        await(admin.client().get("/metrics").send()).statusCode(),
        "a valid session may scrape");
  }
}
