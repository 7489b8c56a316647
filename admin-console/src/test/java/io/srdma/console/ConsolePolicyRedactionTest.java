package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.send;
import static java.util.stream.Collectors.toSet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
    WebClientSession s = WebClientSession.create(console.client(vertx));
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
    assertFalse(got.bodyAsJsonObject().getBoolean("withheld"));

    // a text in a form the regex of old missed: still as it is, in the diff too
    String edited = quotedKey(console.backend.policyText());
    HttpResponse<Buffer> v =
        send(
            admin.client(),
            HttpMethod.POST,
            "/api/policy/validate",
            new JsonObject().put("text", edited),
            admin.csrf());
    assertEquals(200, v.statusCode(), v.bodyAsString());
    assertTrue(v.bodyAsJsonObject().getBoolean("valid"), v.bodyAsString());
    assertFalse(v.bodyAsJsonObject().getBoolean("withheld"));
    assertTrue(
        v.bodyAsJsonObject().getJsonArray("diff").stream()
            .map(JsonObject.class::cast)
            .anyMatch(
                d -> d.getString("op").equals("+") && d.getString("text").contains("\"$shiro2$")),
        v.bodyAsString());
  }

  private static String quotedKey(String t) {
    return t.replace("      password-hash: ", "      \"password-hash\": ");
  }

  /** Valid policy texts whose hashes the line regex of old missed (found by an audit). */
  static Map<String, String> bypasses(String sample) {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("quoted key", quotedKey(sample));
    out.put(
        "value on the next line",
        sample.replace("      password-hash: \"", "      password-hash:\n        \""));
    out.put(
        "folded block",
        sample.replaceAll(
            "      password-hash: \"([^\"]*)\"", "      password-hash: >-\n        $1"));
    out.put(
        "literal block",
        sample.replaceAll(
            "      password-hash: \"([^\"]*)\"", "      password-hash: |-\n        $1\n"));
    out.put(
        "written with escapes",
        sample.replace(
            "      password-hash: \"$shiro2$", "      password-hash: \"\\x24shiro2\\x24"));
    out.put(
        "explicit key", sample.replace("      password-hash: ", "      ? password-hash\n      : "));
    out.put("JSON", json(sample));
    return out;
  }

  /** The sample policy with its console section in JSON, on one line (YAML reads JSON). */
  private static String json(String sample) {
    Policy p = new PolicyLoader().parse("s", sample);
    JsonObject users = new JsonObject();
    p.consoleUsers()
        .values()
        .forEach(
            u ->
                users.put(
                    u.name(),
                    new JsonObject()
                        .put("password-hash", u.passwordHash())
                        .put(
                            "roles",
                            new JsonArray(u.roles().stream().map(r -> r.token()).toList()))));
    return sample.substring(0, sample.indexOf("\nconsole:") + 1)
        + "console: "
        + new JsonObject().put("users", users).encode()
        + "\n";
  }

  @Test
  void shouldHideHashesFromAuditorsInEveryFormTheParserReads(Vertx vertx) throws Exception {
    String original = console.backend.policyText();
    Policy originalPolicy = console.backend.policy();
    List<String> hashes =
        originalPolicy.consoleUsers().values().stream().map(u -> u.passwordHash()).toList();
    assertEquals(2, hashes.size());
    Login auditor = login(vertx, "auditor", ConsoleFixture.AUDITOR_PASSWORD);
    try {
      for (Map.Entry<String, String> b : bypasses(original).entrySet()) {
        String form = b.getKey();
        String text = b.getValue();
        // a valid policy holding the very same hashes
        Policy p = new PolicyLoader().parse("edited", text);
        assertEquals(
            Set.copyOf(hashes),
            p.consoleUsers().values().stream().map(u -> u.passwordHash()).collect(toSet()),
            form);
        // shown redacted, not withheld: every value found in the parse
        PolicyRedaction.Shown shown = PolicyRedaction.redact(text, List.of());
        assertFalse(shown.withheld(), form + ":\n" + shown.text());
        assertNoHash(hashes, shown.text(), form);

        // validated by an auditor against the sample: no hash in the diff
        HttpResponse<Buffer> v =
            send(
                auditor.client(),
                HttpMethod.POST,
                "/api/policy/validate",
                new JsonObject().put("text", text),
                auditor.csrf());
        assertEquals(200, v.statusCode(), v.bodyAsString());
        assertTrue(v.bodyAsJsonObject().getBoolean("valid"), form + ": " + v.bodyAsString());
        assertNoHash(hashes, v.bodyAsString(), form);

        // running: no hash in the text or the diff
        console.backend.reload(p, text, "test");
        HttpResponse<Buffer> got =
            send(auditor.client(), HttpMethod.GET, "/api/policy", null, null);
        assertEquals(200, got.statusCode(), got.bodyAsString());
        assertNoHash(hashes, got.bodyAsString(), form);
        assertFalse(got.bodyAsJsonObject().getBoolean("withheld"), form);
        assertTrue(got.bodyAsJsonObject().getString("text").contains("<redacted>"), form);
        HttpResponse<Buffer> d =
            send(
                auditor.client(),
                HttpMethod.POST,
                "/api/policy/validate",
                new JsonObject().put("text", original),
                auditor.csrf());
        assertEquals(200, d.statusCode(), d.bodyAsString());
        assertNoHash(hashes, d.bodyAsString(), form);
      }
    } finally {
      console.backend.reload(originalPolicy, original, "test");
    }
  }

  /** No hash, nor its salt or digest, nor anything that looks like a hash. */
  private static void assertNoHash(List<String> hashes, String shown, String form) {
    for (String h : hashes) {
      assertFalse(shown.contains(h), form + ": a hash in " + shown);
      for (String part : h.split("\\$")) {
        if (part.length() >= 12) {
          assertFalse(shown.contains(part), form + ": part of a hash in " + shown);
        }
      }
    }
    assertFalse(shown.toLowerCase(java.util.Locale.ROOT).contains("shiro2"), form + ": " + shown);
  }

  @Test
  void shouldWithholdATextThatStillLooksAsIfItHeldAHash() {
    String hash = "$shiro2$2y$10$PeT2IVlGocnxSwx.01V58.dpPW0E47P5CwzkSn.fxtUi40r0ZBM1q";
    String salt = "PeT2IVlGocnxSwx.01V58.dpPW0E47P5CwzkSn.fxtUi40r0ZBM1q";
    String valid = "console:\n  users:\n    a:\n      password-hash: \"" + hash + "\"\n";
    // a hash in a comment is redacted as a value found elsewhere
    PolicyRedaction.Shown s = PolicyRedaction.redact(valid + "# was: " + hash + "\n", List.of());
    assertFalse(s.withheld(), s.text());
    assertFalse(s.text().contains(salt), s.text());
    // a known hash's digest, escaped in a comment: withheld
    s = PolicyRedaction.redact("version: 1\n# \\x24shiro2 " + salt + "\n", List.of(hash));
    assertTrue(s.withheld(), s.text());
    assertEquals(PolicyRedaction.WITHHELD, s.text());
    // text that does not parse: the line regex, then the check
    s = PolicyRedaction.redact("console: [\n  password-hash: \"" + hash + "\"\n", List.of());
    assertFalse(s.withheld(), s.text());
    assertFalse(s.text().contains(salt), s.text());
    s = PolicyRedaction.redact("console: [\n  \"password-hash\":\n   '" + hash + "'\n", List.of());
    assertTrue(s.withheld(), s.text());
    s = PolicyRedaction.redact("tenants: [\n  x: $2y$10$abc\n", List.of());
    assertTrue(s.withheld(), s.text());
    // a text without hashes is shown as it is
    String plain = "version: 1  # no users\ntenants: {}\n";
    assertEquals(plain, PolicyRedaction.redact(plain, List.of(hash)).text());
  }

  @Test
  void shouldKeepLinesAndCommentsAroundARedactedBlockValue() {
    String text =
        "console:\n  users:\n    a:\n      password-hash: >-  # folded\n        $shiro2$x\n"
            + "        $y\n\n      roles: [admin]   # after\n    b:\n      password-hash:\n"
            + "        - \"\\u0024shiro2$z\"\n      roles: [auditor]\n";
    PolicyRedaction.Shown s = PolicyRedaction.redact(text, List.of());
    assertFalse(s.withheld(), s.text());
    assertEquals(
        "console:\n  users:\n    a:\n      password-hash: \"<redacted>\"\n\n"
            + "      roles: [admin]   # after\n    b:\n      password-hash:\n"
            + "        \"<redacted>\"\n      roles: [auditor]\n",
        s.text());
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
