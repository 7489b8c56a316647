package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Auditors never see console users' password hashes; admins, who apply, see the text as is. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsolePolicyRedactionTest {
  @TempDir static Path dir;
  static ConsoleFixture console;

  @BeforeAll
  static void start() {
    console = new ConsoleFixture(dir);
  }

  @AfterAll
  static void stop() {
    console.close();
  }

  private record Login(WebClientSession client, String csrf) {}

  private static Login login(Vertx vertx, String user, String password) throws Exception {
    WebClientSession s =
        WebClientSession.create(
            WebClient.create(
                vertx,
                new WebClientOptions()
                    .setSsl(true)
                    .setTrustOptions(
                        new PemTrustOptions().addCertValue(Buffer.buffer(console.caPem())))
                    .setDefaultHost("127.0.0.1")
                    .setDefaultPort(console.server.port())));
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

  /** No real hash of the running policy appears in an answer. */
  private static void assertNoHash(String body) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\\$shiro2\\$[^\"]+").matcher(console.backend.policyText());
    int hashes = 0;
    while (m.find()) {
      hashes++;
      assertFalse(body.contains(m.group()), "a password hash in " + body);
      assertFalse(body.contains(m.group().substring(20)), "a password hash in " + body);
    }
    assertEquals(2, hashes);
  }

  @Test
  void shouldHidePasswordHashesFromAuditorsInTheTextAndTheDiff(Vertx vertx) throws Exception {
    Login auditor = login(vertx, "auditor", ConsoleFixture.AUDITOR_PASSWORD);
    HttpResponse<Buffer> got = send(auditor.client(), HttpMethod.GET, "/api/policy", null, null);
    assertEquals(200, got.statusCode());
    String text = got.bodyAsJsonObject().getString("text");
    assertNoHash(got.bodyAsString());
    assertEquals(2, text.split("password-hash: \"<redacted>\"", -1).length - 1, text);
    // the sha256 is still that of the real text
    assertEquals(console.backend.policy().sha256(), got.bodyAsJsonObject().getString("sha256"));

    // validating the real text (hashes and all) or the redacted one: no hash in the diff
    for (String edited :
        new String[] {console.backend.policyText() + "# edited\n", text + "# edited\n"}) {
      HttpResponse<Buffer> v =
          send(
              auditor.client(),
              HttpMethod.POST,
              "/api/policy/validate",
              new JsonObject().put("text", edited),
              auditor.csrf());
      assertEquals(200, v.statusCode(), v.bodyAsString());
      assertNoHash(v.bodyAsString());
      long changes =
          v.bodyAsJsonObject().getJsonArray("diff").stream()
              .map(JsonObject.class::cast)
              .filter(d -> !d.getString("op").equals(" "))
              .count();
      assertEquals(1, changes, v.bodyAsString());
    }
  }

  @Test
  void shouldShowAdminsTheTextAsItIsSoApplyNeverWritesAPlaceholder(Vertx vertx) throws Exception {
    Login admin = login(vertx, "admin", ConsoleFixture.ADMIN_PASSWORD);
    HttpResponse<Buffer> got = send(admin.client(), HttpMethod.GET, "/api/policy", null, null);
    String text = got.bodyAsJsonObject().getString("text");
    assertEquals(console.backend.policyText(), text);
    assertTrue(text.contains("$shiro2$"));
    assertFalse(text.contains("<redacted>"));
  }

  @Test
  void shouldRedactHashesInBlockAndFlowStyle() {
    String text =
        "console:\n  users:\n    a:\n      password-hash: \"$shiro2$x\"\n"
            + "    b: {password-hash: '$shiro2$y', roles: [auditor]}\n"
            + "    c:\n      password-hash:   $shiro2$z # plain\n";
    String r = PolicyRoutes.redact(text);
    assertFalse(r.contains("$shiro2$"), r);
    assertTrue(r.contains("{password-hash: \"<redacted>\", roles: [auditor]}"), r);
    assertTrue(r.contains("password-hash:   \"<redacted>\" # plain"), r);
  }
}
