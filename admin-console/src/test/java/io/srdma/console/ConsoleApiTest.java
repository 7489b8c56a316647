package io.srdma.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.PolicyException;
import io.srdma.verbs.doctor.DeviceCounters;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The REST API over real HTTPS: authentication, roles, CSRF, errors, rate limit, headers. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleApiTest {
  static final String METRICS_TOKEN = "metrics-token-0123456789abcdef0123456789";

  @TempDir static Path dir;
  static ConsoleFixture console;
  WebClient client;

  @BeforeAll
  static void startConsole() {
    console =
        new ConsoleFixture(dir, new ConsoleConfig().metricsToken(METRICS_TOKEN.toCharArray()));
  }

  @AfterAll
  static void stopConsole() {
    console.close();
  }

  @BeforeEach
  void client(Vertx vertx) {
    client = console.client(vertx);
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  static HttpResponse<Buffer> send(
      WebClient c, HttpMethod method, String path, Object body, String csrf) throws Exception {
    HttpRequest<Buffer> r = c.request(method, path);
    if (csrf != null) {
      r.putHeader("X-CSRF-Token", csrf);
    }
    if (body == null) {
      return await(r.send());
    }
    r.putHeader("Content-Type", "application/json");
    return await(r.sendBuffer(Buffer.buffer(body.toString())));
  }

  /** A logged-in session and its CSRF token. */
  record Login(WebClientSession client, String csrf, HttpResponse<Buffer> response) {}

  Login login(String user, String password) throws Exception {
    WebClientSession s = WebClientSession.create(client);
    HttpResponse<Buffer> r =
        send(
            s,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", user).put("password", password),
            null);
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return new Login(s, r.bodyAsJsonObject().getString("csrf"), r);
  }

  static void assertError(HttpResponse<Buffer> r, int status, String code) {
    assertEquals(status, r.statusCode(), r.bodyAsString());
    assertTrue(
        r.getHeader("Content-Type").startsWith("application/json"), r.getHeader("Content-Type"));
    JsonObject e = r.bodyAsJsonObject();
    assertEquals(code, e.getString("code"), e.encode());
    assertFalse(e.getString("message").isBlank());
  }

  static List<JsonObject> auditLines() throws IOException {
    return Files.readAllLines(console.log.file(), StandardCharsets.US_ASCII).stream()
        .map(JsonObject::new)
        .toList();
  }

  @Test
  void shouldRequireLoginOnEveryApiRouteAndMetrics() throws Exception {
    String[][] routes = {
      {"GET", "/api/me"},
      {"POST", "/api/logout"},
      {"GET", "/api/stats"},
      {"GET", "/api/stream"},
      {"GET", "/api/sessions"},
      {"GET", "/api/regions"},
      {"GET", "/api/grants"},
      {"GET", "/api/grants/g-1"},
      {"DELETE", "/api/grants/g-1"},
      {"GET", "/api/policy"},
      {"POST", "/api/policy/validate"},
      {"POST", "/api/policy/apply"},
      {"GET", "/api/audit"},
      {"GET", "/api/audit/export"},
      {"GET", "/api/audit/verify"},
      {"GET", "/api/nonexistent"},
      {"GET", "/metrics"}
    };
    for (String[] route : routes) {
      HttpResponse<Buffer> r =
          send(client, HttpMethod.valueOf(route[0]), route[1], new JsonObject(), null);
      assertError(r, 401, "not_authenticated");
    }
    assertEquals(
        1, console.backend.grants().stream().filter(g -> g.grantId().equals("g-1")).count());
    HttpResponse<Buffer> page = send(client, HttpMethod.GET, "/grants.html", null, null);
    assertEquals(302, page.statusCode());
    assertEquals("/login.html", page.getHeader("Location"));
    assertEquals(200, send(client, HttpMethod.GET, "/login.html", null, null).statusCode());
  }

  @Test
  void shouldLogInWithHardenedCookieAndAuditIt() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    String cookie =
        admin.response().cookies().stream()
            .filter(c -> c.startsWith(ConsoleSessions.COOKIE + "="))
            .findFirst()
            .orElseThrow();
    String lower = cookie.toLowerCase(java.util.Locale.ROOT);
    assertTrue(lower.contains("; secure"), cookie);
    assertTrue(lower.contains("; httponly"), cookie);
    assertTrue(lower.contains("samesite=strict"), cookie);
    JsonObject me = admin.response().bodyAsJsonObject();
    assertEquals(new JsonArray().add("admin"), me.getJsonArray("roles"));
    assertTrue(me.getString("csrf").length() >= 40);
    HttpResponse<Buffer> again = send(admin.client(), HttpMethod.GET, "/api/me", null, null);
    assertEquals(200, again.statusCode());
    assertEquals(admin.csrf(), again.bodyAsJsonObject().getString("csrf"));
    assertTrue(
        auditLines().stream()
            .anyMatch(
                l ->
                    l.getString("action").equals("authenticate")
                        && l.getString("outcome").equals("success")
                        && l.getString("actor").equals("admin")));

    HttpResponse<Buffer> out =
        send(admin.client(), HttpMethod.POST, "/api/logout", null, admin.csrf());
    assertEquals(204, out.statusCode());
    assertTrue(
        out.cookies().stream()
            .anyMatch(c -> c.startsWith(ConsoleSessions.COOKIE + "=;") && c.contains("Max-Age=0")),
        out.cookies().toString());
    assertError(
        send(admin.client(), HttpMethod.GET, "/api/me", null, null), 401, "not_authenticated");
  }

  @Test
  void shouldKeepNoSessionForRequestsWithoutALogin() throws Exception {
    int before = console.server.sessionCount();
    for (int i = 0; i < 20; i++) {
      await(
          client
              .get(i % 2 == 0 ? "/login.html" : "/api/me")
              .putHeader("Cookie", ConsoleSessions.COOKIE + "=forged-" + i)
              .send());
      await(client.get("/index.html").send());
    }
    assertError(
        send(
            client,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", "nobody").put("password", "x"),
            null),
        401,
        "bad_credentials");
    assertEquals(before, console.server.sessionCount());
    login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    assertEquals(before + 1, console.server.sessionCount());
  }

  @Test
  void shouldRefuseWrongPasswordWith401AndAuditIt() throws Exception {
    HttpResponse<Buffer> r =
        send(
            client,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", "auditor").put("password", "guess"),
            null);
    assertError(r, 401, "bad_credentials");
    assertTrue(
        auditLines().stream()
            .anyMatch(
                l ->
                    l.getString("outcome").equals("failure")
                        && "auditor".equals(l.getString("actor"))
                        && "BAD_PASSWORD".equals(l.getString("reason"))));
    assertFalse(Files.readString(console.log.file()).contains("guess"));
  }

  @Test
  void shouldRateLimitLoginsPerUserAndAddress() throws Exception {
    JsonObject wrong = new JsonObject().put("user", "mallory").put("password", "p");
    for (int i = 0; i < ConsoleFixture.LOGIN_ATTEMPTS; i++) {
      assertError(send(client, HttpMethod.POST, "/api/login", wrong, null), 401, "bad_credentials");
    }
    HttpResponse<Buffer> limited = send(client, HttpMethod.POST, "/api/login", wrong, null);
    assertError(limited, 429, "rate_limited");
    assertTrue(limited.bodyAsJsonObject().getString("message").contains("too many login attempts"));
    assertTrue(Integer.parseInt(limited.getHeader("Retry-After")) > 0);
    // another user from the same address is not affected
    login("admin", ConsoleFixture.ADMIN_PASSWORD);
  }

  @Test
  void shouldRefuseStateChangesWithoutTheCsrfToken() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    assertError(
        send(admin.client(), HttpMethod.DELETE, "/api/grants/g-3", null, null), 403, "csrf");
    assertError(
        send(admin.client(), HttpMethod.DELETE, "/api/grants/g-3", null, "forged"), 403, "csrf");
    Login other = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    assertError(
        send(admin.client(), HttpMethod.DELETE, "/api/grants/g-3", null, other.csrf()),
        403,
        "csrf");
    assertError(
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", FakeBackend.sampleText()),
            null),
        403,
        "csrf");
    assertTrue(console.backend.grants().stream().anyMatch(g -> g.grantId().equals("g-3")));
    // a foreign page cannot log anyone in either
    HttpResponse<Buffer> foreign =
        await(
            client
                .post("/api/login")
                .putHeader("Origin", "https://evil.example")
                .sendJsonObject(
                    new JsonObject().put("user", "admin").put("password", "admin-demo")));
    assertError(foreign, 403, "csrf");
  }

  @Test
  void shouldForbidAuditorsToRevokeOrReload() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    assertEquals(
        new JsonArray().add("auditor"),
        auditor.response().bodyAsJsonObject().getJsonArray("roles"));
    assertEquals(
        200, send(auditor.client(), HttpMethod.GET, "/api/grants", null, null).statusCode());
    assertError(
        send(auditor.client(), HttpMethod.DELETE, "/api/grants/g-4", null, auditor.csrf()),
        403,
        "forbidden");
    assertError(
        send(
            auditor.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", FakeBackend.sampleText() + "# edited\n"),
            auditor.csrf()),
        403,
        "forbidden");
    assertTrue(console.backend.grants().stream().anyMatch(g -> g.grantId().equals("g-4")));
    // validating changes nothing: auditors may
    assertEquals(
        200,
        send(
                auditor.client(),
                HttpMethod.POST,
                "/api/policy/validate",
                new JsonObject().put("text", "version: 1\ntenants: {}\n"),
                auditor.csrf())
            .statusCode());
  }

  @Test
  void shouldRevokeGrantAuditFirstAndAnswer404Afterwards() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    HttpResponse<Buffer> r =
        send(admin.client(), HttpMethod.DELETE, "/api/grants/g-2", null, admin.csrf());
    assertEquals(200, r.statusCode(), r.bodyAsString());
    assertTrue(r.bodyAsJsonObject().getBoolean("revoked"));
    assertTrue(console.backend.revokedBy.contains("g-2 by admin"));
    JsonObject line =
        auditLines().stream()
            .filter(l -> l.getString("action").equals("revoke"))
            .filter(l -> "g-2".equals(l.getString("grant")))
            .findFirst()
            .orElseThrow();
    assertEquals("admin", line.getString("actor"));
    assertEquals("revoked", line.getString("reason"));
    assertEquals("srdma://acme/trainer-1", line.getString("peer"));
    assertError(
        send(admin.client(), HttpMethod.DELETE, "/api/grants/g-2", null, admin.csrf()),
        404,
        "not_found");
  }

  @Test
  void shouldListPeersOfThePolicyWithTheirSessions() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    JsonArray peers =
        send(auditor.client(), HttpMethod.GET, "/api/peers", null, null)
            .bodyAsJsonObject()
            .getJsonArray("items");
    JsonObject trainers =
        peers.stream()
            .map(JsonObject.class::cast)
            .filter(p -> p.getString("identity").equals("srdma://acme/trainer-*"))
            .findFirst()
            .orElseThrow();
    assertEquals("acme", trainers.getString("tenant"));
    assertEquals(new JsonArray().add("trainer"), trainers.getJsonArray("roles"));
    assertEquals(1, trainers.getInteger("sessions"));
    assertEquals(5, peers.size());
  }

  @Test
  void shouldAnswerUnknownIdsAndRoutesWith404Json() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    HttpResponse<Buffer> r =
        send(auditor.client(), HttpMethod.GET, "/api/grants/g-404", null, null);
    assertError(r, 404, "not_found");
    assertTrue(r.bodyAsJsonObject().getString("message").contains("g-404"));
    assertError(send(auditor.client(), HttpMethod.GET, "/api/nope", null, null), 404, "not_found");
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    assertError(
        send(admin.client(), HttpMethod.DELETE, "/api/grants/g-404", null, admin.csrf()),
        404,
        "not_found");
  }

  @Test
  void shouldAnswerBadJsonWith400NamingTheProblem() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    HttpResponse<Buffer> r =
        send(admin.client(), HttpMethod.POST, "/api/policy/validate", "{not json", admin.csrf());
    assertError(r, 400, "bad_json");
    assertTrue(r.bodyAsJsonObject().getString("message").contains("not valid JSON"));
    r = send(admin.client(), HttpMethod.POST, "/api/policy/validate", "[1,2]", admin.csrf());
    assertError(r, 400, "bad_json");
    r =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/validate",
            new JsonObject(),
            admin.csrf());
    assertError(r, 400, "bad_request");
    assertTrue(r.bodyAsJsonObject().getString("message").contains("'text' is required"));
    r =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/validate",
            new JsonObject().put("text", 7),
            admin.csrf());
    assertError(r, 400, "bad_request");
    assertTrue(r.bodyAsJsonObject().getString("message").contains("'text' must be a string"));
    r =
        await(
            admin
                .client()
                .post("/api/policy/validate")
                .putHeader("X-CSRF-Token", admin.csrf())
                .putHeader("Content-Type", "text/plain")
                .sendBuffer(Buffer.buffer("version: 1")));
    assertError(r, 415, "unsupported_media_type");
    assertError(send(client, HttpMethod.POST, "/api/login", "{\"user\":", null), 400, "bad_json");
    r =
        send(
            client,
            HttpMethod.POST,
            "/api/login",
            new JsonObject().put("user", "admin").put("password", "x".repeat(5000)),
            null);
    assertError(r, 400, "bad_request");
    assertTrue(r.bodyAsJsonObject().getString("message").contains("'password'"));
    r = send(admin.client(), HttpMethod.GET, "/api/audit?from=yesterday", null, null);
    assertError(r, 400, "bad_request");
    assertTrue(r.bodyAsJsonObject().getString("message").contains("'from'"));
  }

  @Test
  void shouldValidateWithLineColumnErrorsAndDiff() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    String broken = FakeBackend.sampleText().replace("size: 64MiB", "sise: 64MiB");
    JsonObject v =
        send(
                auditor.client(),
                HttpMethod.POST,
                "/api/policy/validate",
                new JsonObject().put("text", broken),
                auditor.csrf())
            .bodyAsJsonObject();
    assertFalse(v.getBoolean("valid"));
    JsonObject first = v.getJsonArray("errors").getJsonObject(0);
    int line = lineOf(broken, "sise: 64MiB");
    assertEquals(line, first.getInteger("line"), v.encode());
    assertTrue(first.getInteger("column") > 1);
    assertTrue(first.getString("text").startsWith("edited:" + line + ":"));
    assertTrue(v.getBoolean("changed"));
    assertTrue(v.getJsonArray("diff").encode().contains("sise: 64MiB"));
    long changes =
        v.getJsonArray("diff").stream()
            .map(JsonObject.class::cast)
            .filter(d -> !d.getString("op").equals(" "))
            .count();
    assertEquals(2, changes);
  }

  static int lineOf(String text, String needle) {
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].contains(needle)) {
        return i + 1;
      }
    }
    throw new AssertionError(needle);
  }

  @Test
  void shouldApplyPolicyAtomicallyAndAuditEveryAttempt() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    String before = console.backend.policy().sha256();
    String broken = FakeBackend.sampleText().replace("max-ttl: 10m", "max-ttl: ten minutes");
    HttpResponse<Buffer> r =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", broken),
            admin.csrf());
    assertError(r, 422, "invalid_policy");
    assertTrue(r.bodyAsJsonObject().getJsonArray("errors").size() >= 1);
    assertEquals(before, console.backend.policy().sha256());

    String good = console.backend.policyText() + "# applied from the console test\n";
    r =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", good).put("base", "0".repeat(64)),
            admin.csrf());
    assertError(r, 409, "conflict");
    assertEquals(before, console.backend.policy().sha256());

    console.backend.refuseReload =
        new PolicyException(PolicyException.Category.INVALID_POLICY, "host says no");
    try {
      r =
          send(
              admin.client(),
              HttpMethod.POST,
              "/api/policy/apply",
              new JsonObject().put("text", good),
              admin.csrf());
      assertError(r, 409, "reload_refused");
    } finally {
      console.backend.refuseReload = null;
    }

    r =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", good).put("base", before),
            admin.csrf());
    assertEquals(200, r.statusCode(), r.bodyAsString());
    JsonObject out = r.bodyAsJsonObject();
    assertEquals(console.backend.policy().sha256(), out.getString("sha256"));
    assertEquals(before, out.getString("previousSha256"));
    assertEquals(good, console.backend.policyText());
    List<JsonObject> reloads =
        auditLines().stream().filter(l -> l.getString("action").equals("reload")).toList();
    assertTrue(
        reloads.stream()
            .anyMatch(
                l ->
                    l.getString("outcome").equals("failure")
                        && l.getString("reason").equals("INVALID_POLICY")
                        && "admin".equals(l.getString("actor"))));
    assertTrue(
        reloads.stream()
            .anyMatch(
                l ->
                    l.getString("outcome").equals("success")
                        && out.getString("sha256").equals(l.getString("policy"))));
  }

  @Test
  void shouldAnswerHostilePolicyTextWith400AndAuditTheRefusedApply() throws Exception {
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    String before = console.backend.policy().sha256();
    // generated here: 1,500 nested '[' used to overflow the stack of a worker thread (500)
    String deep = "version: 1\ntenants:\n  acme: " + "[".repeat(1500) + "\n";
    StringBuilder bomb = new StringBuilder("version: 1\ntenants: {}\nx0: &x0 [lol, lol]\n");
    for (int i = 1; i < 30; i++) {
      bomb.append("x").append(i).append(": [*x").append(i - 1).append(", *x");
      bomb.append(i - 1).append("]\n");
    }
    String[][] cases = {
      {deep, "edited:3:39: nested more than 32"},
      {bomb.toString(), "edited:3:5: anchors are not allowed"},
      {"version: 1\ntenants: {a\u202e: {}}\n", "edited:2:12: character U+202E"},
    };
    for (String[] c : cases) {
      HttpResponse<Buffer> r =
          send(
              admin.client(),
              HttpMethod.POST,
              "/api/policy/validate",
              new JsonObject().put("text", c[0]),
              admin.csrf());
      assertError(r, 400, "hostile_policy");
      assertTrue(r.bodyAsJsonObject().getString("message").contains(c[1]), r.bodyAsString());
      assertEquals(
          c[1].substring(0, c[1].indexOf(':', 7)),
          "edited:"
              + r.bodyAsJsonObject().getJsonArray("errors").getJsonObject(0).getInteger("line"),
          r.bodyAsString());
    }
    HttpResponse<Buffer> r =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/apply",
            new JsonObject().put("text", deep),
            admin.csrf());
    assertError(r, 400, "hostile_policy");
    assertEquals(before, console.backend.policy().sha256());
    assertTrue(
        auditLines().stream()
            .anyMatch(
                l ->
                    l.getString("action").equals("reload")
                        && l.getString("outcome").equals("failure")
                        && l.encode().contains("nested more than 32")));
    // quoted numbers and the reserved tenant are ordinary mistakes: 200, valid false
    JsonObject v =
        send(
                admin.client(),
                HttpMethod.POST,
                "/api/policy/validate",
                new JsonObject().put("text", "version: \"1\"\ntenants: {host: {}}\n"),
                admin.csrf())
            .bodyAsJsonObject();
    assertFalse(v.getBoolean("valid"));
    assertEquals(2, v.getJsonArray("errors").size(), v.encode());
  }

  @Test
  void shouldBoundConcurrentPasswordChecks(Vertx vertx) throws Exception {
    WebClient many = console.client(vertx, 16);
    try {
      int n = 16;
      // open the connections first, so that the logins below arrive together
      List<Future<HttpResponse<Buffer>>> warm = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        warm.add(many.get("/api/me").send());
      }
      await(Future.all(warm));
      List<Future<HttpResponse<Buffer>>> logins = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        logins.add(
            many.post("/api/login")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(
                    Buffer.buffer(
                        new JsonObject()
                            .put("user", "admin")
                            .put("password", ConsoleFixture.ADMIN_PASSWORD)
                            .encode())));
      }
      await(Future.join(logins));
      int ok = 0;
      int busy = 0;
      for (Future<HttpResponse<Buffer>> f : logins) {
        HttpResponse<Buffer> r = f.result();
        if (r.statusCode() == 200) {
          ok++;
        } else {
          assertError(r, 429, "login_busy");
          assertEquals("1", r.getHeader("Retry-After"));
          busy++;
        }
      }
      assertTrue(ok >= 1, ok + " ok, " + busy + " busy");
      assertTrue(busy >= 1, "16 concurrent Argon2id checks were all run: " + ok + " ok");
      // refused checks were not counted: the user can log in at once
      login("admin", ConsoleFixture.ADMIN_PASSWORD);
    } finally {
      many.close();
    }
  }

  @Test
  void shouldSendSecurityHeadersEverywhere() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    for (String path : new String[] {"/login.html", "/index.html", "/app.css", "/api/me"}) {
      HttpResponse<Buffer> r = send(auditor.client(), HttpMethod.GET, path, null, null);
      assertEquals(200, r.statusCode(), path);
      String csp = r.getHeader("Content-Security-Policy");
      assertNotNull(csp, path);
      assertTrue(csp.startsWith("default-src 'self'"), csp);
      assertTrue(csp.contains("frame-ancestors 'none'"), csp);
      assertFalse(csp.contains("unsafe-inline"), csp);
      assertEquals("DENY", r.getHeader("X-Frame-Options"));
      assertEquals("nosniff", r.getHeader("X-Content-Type-Options"));
      assertEquals("no-referrer", r.getHeader("Referrer-Policy"));
      assertTrue(r.getHeader("Strict-Transport-Security").startsWith("max-age="));
    }
    assertEquals(
        "no-store",
        send(auditor.client(), HttpMethod.GET, "/api/me", null, null).getHeader("Cache-Control"));
  }

  @Test
  void shouldServeStaticPagesWithoutInlineScript() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    Pattern inline = Pattern.compile("<script(?![^>]*\\bsrc=)[^>]*>|\\son[a-z]+=|style=");
    for (String page :
        new String[] {"login", "index", "sessions", "regions", "grants", "policy", "audit"}) {
      String html =
          send(auditor.client(), HttpMethod.GET, "/" + page + ".html", null, null).bodyAsString();
      Matcher m = inline.matcher(html);
      assertFalse(m.find(), page + ": " + (m.find(0) ? m.group() : ""));
      assertFalse(html.contains("http://") || html.contains("https://"), page + " loads no CDN");
    }
  }

  @Test
  void shouldListFilterExportAndVerifyTheAuditLog() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    login("admin", ConsoleFixture.ADMIN_PASSWORD);
    JsonObject page =
        send(auditor.client(), HttpMethod.GET, "/api/audit?action=authenticate&limit=1", null, null)
            .bodyAsJsonObject();
    assertTrue(page.getInteger("total") >= 2, page.encode());
    assertEquals(1, page.getJsonArray("items").size());
    JsonObject newest = page.getJsonArray("items").getJsonObject(0);
    JsonObject second =
        send(
                auditor.client(),
                HttpMethod.GET,
                "/api/audit?action=authenticate&limit=1&offset=1",
                null,
                null)
            .bodyAsJsonObject()
            .getJsonArray("items")
            .getJsonObject(0);
    assertTrue(newest.getLong("seq") > second.getLong("seq"));
    assertEquals(
        0,
        send(auditor.client(), HttpMethod.GET, "/api/audit?tenant=nobody", null, null)
            .bodyAsJsonObject()
            .getInteger("total"));
    assertEquals(
        0,
        send(auditor.client(), HttpMethod.GET, "/api/audit?to=2000-01-01T00:00:00Z", null, null)
            .bodyAsJsonObject()
            .getInteger("total"));
    assertError(
        send(auditor.client(), HttpMethod.GET, "/api/audit?action=explode", null, null),
        400,
        "bad_request");

    HttpResponse<Buffer> export =
        send(auditor.client(), HttpMethod.GET, "/api/audit/export?outcome=success", null, null);
    assertEquals(200, export.statusCode());
    assertTrue(export.getHeader("Content-Type").startsWith("application/x-ndjson"));
    assertTrue(export.getHeader("Content-Disposition").startsWith("attachment"));
    List<String> lines = export.bodyAsString().lines().toList();
    assertTrue(lines.size() >= 2);
    for (String l : lines) {
      assertEquals("success", new JsonObject(l).getString("outcome"));
    }

    JsonObject v =
        send(auditor.client(), HttpMethod.GET, "/api/audit/verify", null, null).bodyAsJsonObject();
    assertTrue(v.getBoolean("intact"), v.encode());
    assertEquals(console.log.head(), v.getString("head"));
  }

  @Test
  void shouldServeMetricsToLoggedInUsersOrTheToken() throws Exception {
    console.backend.advance(12345, 7);
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    HttpResponse<Buffer> r = send(auditor.client(), HttpMethod.GET, "/metrics", null, null);
    assertEquals(200, r.statusCode());
    assertTrue(r.bodyAsString().contains("srdma_bytes_moved_total"), r.bodyAsString());
    assertTrue(r.bodyAsString().contains("srdma_console_logins_total"));
    HttpResponse<Buffer> scraper =
        await(client.get("/metrics").putHeader("Authorization", "Bearer " + METRICS_TOKEN).send());
    assertEquals(200, scraper.statusCode());
    assertError(
        await(client.get("/metrics").putHeader("Authorization", "Bearer wrong").send()),
        401,
        "not_authenticated");
  }

  /** A fake sysfs: rxe0 port 1 with port and hw counters, a dangling link, a folder, junk. */
  static Path fakeSys(Path root) throws IOException {
    Path port = root.resolve("class/infiniband/rxe0/ports/1");
    Map<String, String> files =
        Map.of(
            "counters/port_rcv_data", "1000\n",
            "counters/port_xmit_data", "250\n",
            "counters/port_rcv_errors", "3\n",
            "counters/port_xmit_wait", "N/A (no PMA)\n",
            "counters/unknown_counter", "8\n",
            "hw_counters/rcvd_rnr_err", "5\n",
            "hw_counters/duplicate_request", "2\n",
            "hw_counters/send_err", "garbage\n",
            "hw_counters/lifespan", "10\n");
    for (Map.Entry<String, String> f : files.entrySet()) {
      Path file = port.resolve(f.getKey());
      Files.createDirectories(file.getParent());
      Files.writeString(file, f.getValue());
    }
    Files.createSymbolicLink(port.resolve("counters/port_rcv_packets"), root.resolve("gone"));
    Files.createDirectories(port.resolve("hw_counters/rcvd_seq_err"));
    return root;
  }

  @Test
  void shouldExportDeviceCountersReadAtScrapeTime() throws Exception {
    Path sys = fakeSys(dir.resolve("sys"));
    console.backend.deviceCounters = new DeviceCounters(sys, "rxe0");
    try {
      String text = scrape();
      List<String> lines = text.lines().filter(l -> l.contains("infiniband")).toList();
      assertEquals(
          List.of(
              "# HELP srdma_infiniband_hw_counter_total the driver's hardware counters"
                  + " (ports/<n>/hw_counters/<counter>)",
              "# TYPE srdma_infiniband_hw_counter_total counter",
              "srdma_infiniband_hw_counter_total{counter=\"duplicate_request\",device=\"rxe0\","
                  + "port=\"1\"} 2.0",
              "srdma_infiniband_hw_counter_total{counter=\"rcvd_rnr_err\",device=\"rxe0\","
                  + "port=\"1\"} 5.0",
              "# HELP srdma_infiniband_port_counter_total other port counters"
                  + " (ports/<n>/counters/<counter>)",
              "# TYPE srdma_infiniband_port_counter_total counter",
              "srdma_infiniband_port_counter_total{counter=\"unknown_counter\",device=\"rxe0\","
                  + "port=\"1\"} 8.0",
              "# HELP srdma_infiniband_port_data_received_bytes_total data bytes received on the"
                  + " port (the file counts 4-byte words)",
              "# TYPE srdma_infiniband_port_data_received_bytes_total counter",
              "srdma_infiniband_port_data_received_bytes_total{device=\"rxe0\",port=\"1\"} 4000.0",
              "# HELP srdma_infiniband_port_data_transmitted_bytes_total data bytes sent from the"
                  + " port (the file counts 4-byte words)",
              "# TYPE srdma_infiniband_port_data_transmitted_bytes_total counter",
              "srdma_infiniband_port_data_transmitted_bytes_total{device=\"rxe0\",port=\"1\"}"
                  + " 1000.0",
              "# HELP srdma_infiniband_port_errors_received_total received packets with an error",
              "# TYPE srdma_infiniband_port_errors_received_total counter",
              "srdma_infiniband_port_errors_received_total{device=\"rxe0\",port=\"1\"} 3.0"),
          lines,
          text);

      // read again at the next scrape: a changed value shows, a vanished file's series goes
      Path port = sys.resolve("class/infiniband/rxe0/ports/1");
      Files.writeString(port.resolve("hw_counters/rcvd_rnr_err"), "6\n");
      Files.delete(port.resolve("counters/port_rcv_errors"));
      String again = scrape();
      assertTrue(
          again.contains(
              "srdma_infiniband_hw_counter_total{counter=\"rcvd_rnr_err\",device=\"rxe0\","
                  + "port=\"1\"} 6.0"),
          again);
      assertFalse(again.contains("port_errors_received"), again);
      assertTrue(again.contains("srdma_bytes_moved_total"), again);

      // a device that is not there, or a reader that throws: the scrape still answers
      console.backend.deviceCounters = new DeviceCounters(sys, "mlx5_0");
      assertFalse(scrape().contains("infiniband"));
      console.backend.deviceCountersFail = true;
      String failed = scrape();
      assertFalse(failed.contains("infiniband"), failed);
      assertTrue(failed.contains("srdma_bytes_moved_total"), failed);
    } finally {
      console.backend.deviceCounters = null;
      console.backend.deviceCountersFail = false;
    }
  }

  private String scrape() throws Exception {
    HttpResponse<Buffer> r =
        await(client.get("/metrics").putHeader("Authorization", "Bearer " + METRICS_TOKEN).send());
    assertEquals(200, r.statusCode());
    return r.bodyAsString();
  }

  @Test
  void shouldStreamCountersAsServerSentEvents(Vertx vertx, VertxTestContext test) throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    String cookie =
        auditor.response().cookies().stream()
            .filter(c -> c.startsWith(ConsoleSessions.COOKIE + "="))
            .findFirst()
            .orElseThrow();
    cookie = cookie.substring(0, cookie.indexOf(';'));
    HttpClient http = console.http(vertx);
    long start = console.backend.bytesMoved.get();
    long ticker = vertx.setPeriodic(100, id -> console.backend.advance(1000, 1));
    StringBuilder seen = new StringBuilder();
    Pattern bytes = Pattern.compile("\"bytesMoved\":(\\d+)");
    http.request(
            new RequestOptions()
                .setHost("127.0.0.1")
                .setPort(console.server.port())
                .setURI("/api/stream")
                .putHeader("Cookie", cookie))
        .compose(req -> req.send())
        .onComplete(
            test.succeeding(
                resp -> {
                  test.verify(
                      () ->
                          assertTrue(
                              resp.getHeader("Content-Type").startsWith("text/event-stream")));
                  resp.handler(
                      buf -> {
                        seen.append(buf.toString(StandardCharsets.UTF_8));
                        Matcher m = bytes.matcher(seen);
                        long max = -1;
                        int events = 0;
                        while (m.find()) {
                          events++;
                          max = Math.max(max, Long.parseLong(m.group(1)));
                        }
                        if (events >= 2 && max > start) {
                          vertx.cancelTimer(ticker);
                          test.completeNow();
                        }
                      });
                }));
    assertTrue(test.awaitCompletion(20, TimeUnit.SECONDS));
    vertx.cancelTimer(ticker);
    await(http.close());
  }

  @Test
  void shouldEndTheSessionOfAUserRemovedFromThePolicy() throws Exception {
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    Login admin = login("admin", ConsoleFixture.ADMIN_PASSWORD);
    String running = console.backend.policyText();
    int cut = running.indexOf("    auditor:\n");
    assertTrue(cut > 0);
    String withoutAuditor = running.substring(0, cut);
    try {
      assertEquals(
          200,
          send(
                  admin.client(),
                  HttpMethod.POST,
                  "/api/policy/apply",
                  new JsonObject().put("text", withoutAuditor),
                  admin.csrf())
              .statusCode());
      assertError(
          send(auditor.client(), HttpMethod.GET, "/api/grants", null, null),
          401,
          "not_authenticated");
    } finally {
      assertEquals(
          200,
          send(
                  admin.client(),
                  HttpMethod.POST,
                  "/api/policy/apply",
                  new JsonObject().put("text", running),
                  admin.csrf())
              .statusCode());
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldServeEveryGetPathOfTheOpenApiDocument() throws Exception {
    Path doc = Path.of(System.getProperty("user.dir")).resolve("../docs/openapi.yaml");
    Assumptions.assumeTrue(Files.exists(doc), "no " + doc);
    Map<String, Object> api =
        (Map<String, Object>)
            new org.snakeyaml.engine.v2.api.Load(
                    org.snakeyaml.engine.v2.api.LoadSettings.builder().build())
                .loadFromString(Files.readString(doc));
    Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>) api.get("paths");
    Login auditor = login("auditor", ConsoleFixture.AUDITOR_PASSWORD);
    int checked = 0;
    for (Map.Entry<String, Map<String, Object>> p : paths.entrySet()) {
      if (!p.getValue().containsKey("get") || p.getKey().equals("/api/stream")) {
        continue;
      }
      String path = p.getKey().replace("{id}", "g-4");
      HttpResponse<Buffer> r = send(auditor.client(), HttpMethod.GET, path, null, null);
      assertEquals(200, r.statusCode(), path + ": " + r.bodyAsString());
      checked++;
    }
    assertTrue(checked >= 10, "checked " + checked);
  }
}
