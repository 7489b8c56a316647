package io.srdma.console;

import static io.srdma.console.ConsoleApiTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit page and export over HTTPS on a log with a large rotated file beside the active one:
 * the page is the newest entries across both, the export (many chunks) is every line in order.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ConsoleAuditLargeLogTest {
  /** About 6 MiB: many export chunks of {@link AuditExport#CHUNK_CHARS}. */
  private static final int ROTATED_LINES = 30_000;

  @TempDir Path dir;
  ConsoleFixture console;
  WebClient client;
  String rotated;

  @BeforeEach
  void start(Vertx vertx) throws IOException {
    console = new ConsoleFixture(dir); // its active log is dir/audit.log
    // put beside it once it is open (the log checks a rotated file's last line when it opens)
    StringBuilder b = new StringBuilder();
    Path file = dir.resolve("audit.log.000000000001");
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      for (int seq = 1; seq <= ROTATED_LINES; seq++) {
        String line =
            new JsonObject()
                .put("seq", seq)
                .put("action", seq % 2 == 0 ? "revoke" : "grant")
                .put("outcome", "success")
                .put("detail", "old line " + seq + " " + "d".repeat(150))
                .encode();
        w.write(line);
        w.write('\n');
        b.append(line).append('\n');
      }
    }
    rotated = b.toString();
    client = console.client(vertx);
  }

  @AfterEach
  void stop() {
    console.close();
  }

  private WebClientSession login() throws Exception {
    WebClientSession s = WebClientSession.create(client);
    HttpResponse<Buffer> r =
        await(
            s.post("/api/login")
                .sendJsonObject(
                    new JsonObject()
                        .put("user", "auditor")
                        .put("password", ConsoleFixture.AUDITOR_PASSWORD)));
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return s;
  }

  @Test
  void shouldPageAndExportAcrossALargeRotatedFile() throws Exception {
    WebClientSession auditor = login();
    List<String> active = Files.readAllLines(console.log.file(), StandardCharsets.US_ASCII);
    assertFalse(active.isEmpty(), "the login is audited in the active file");

    // newest first: the active file's lines, then the rotated file's from its end
    int offset = active.size() - 2;
    JsonObject page =
        await(auditor.get("/api/audit?limit=5&offset=" + offset).send()).bodyAsJsonObject();
    assertEquals(ROTATED_LINES + active.size(), page.getInteger("total"), page.encode());
    JsonArray items = page.getJsonArray("items");
    assertEquals(5, items.size());
    assertEquals(
        new JsonObject(active.get(1)).getLong("seq"), items.getJsonObject(0).getLong("seq"));
    assertEquals(
        new JsonObject(active.get(0)).getLong("seq"), items.getJsonObject(1).getLong("seq"));
    for (int i = 2; i < 5; i++) {
      assertEquals(ROTATED_LINES - (i - 2), items.getJsonObject(i).getLong("seq"));
    }
    JsonObject revokes =
        await(auditor.get("/api/audit?action=revoke&limit=3&offset=100").send()).bodyAsJsonObject();
    assertEquals(ROTATED_LINES / 2, revokes.getInteger("total"), revokes.encode());
    assertEquals(
        ROTATED_LINES - 200, revokes.getJsonArray("items").getJsonObject(0).getLong("seq"));

    HttpResponse<Buffer> export = await(auditor.get("/api/audit/export").send());
    assertEquals(200, export.statusCode());
    String want =
        rotated
            + String.join("\n", Files.readAllLines(console.log.file(), StandardCharsets.US_ASCII))
            + "\n";
    String got = export.bodyAsString();
    // the export's own request may add nothing: reads are not audited
    assertEquals(want.length(), got.length());
    assertEquals(want, got);
  }
}
