package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Errors of the serve configuration echo values, keys, paths and the file name: a line feed,
 * carriage return, tab or format character (bidi, zero-width) in one reaches the error only escaped
 * as {@code \}{@code uXXXX}, so it cannot forge or hide a line where the error is printed or
 * logged.
 */
class ServeConfigEscapingTest {
  // YAML double-quoted escapes: the parsed value holds LF, CR, tab and a zero-width space (the
  // YAML reader refuses bidi controls itself, in the text and in escapes)
  private static final String HOSTILE_YAML = "\\n\\r\\t\\u200B";
  private static final String ESCAPED = "\\u000A\\u000D\\u0009\\u200B";

  @TempDir Path dir;

  static void assertPrintable(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      int type = Character.getType(c);
      assertFalse(
          type == Character.CONTROL
              || type == Character.FORMAT
              || type == Character.LINE_SEPARATOR
              || type == Character.PARAGRAPH_SEPARATOR
              || type == Character.SURROGATE,
          String.format("raw U+%04X at %d in: %s", (int) c, i, text));
    }
  }

  private List<String> refused(Path f, String text) throws Exception {
    Files.writeString(f, text);
    ServeConfig.ConfigException e =
        assertThrows(ServeConfig.ConfigException.class, () -> ServeConfig.read(f));
    assertPrintable(e.getMessage());
    e.errors().forEach(ServeConfigEscapingTest::assertPrintable);
    return e.errors();
  }

  @Test
  void shouldEscapeControlCharactersOfEchoedValuesAndKeys() throws Exception {
    List<String> e =
        refused(
            dir.resolve("serve.yaml"),
            "version: 1\nlisten: \"127.0.0.1:7471"
                + HOSTILE_YAML
                + "\"\nprovider: \"soft"
                + HOSTILE_YAML
                + "\"\n\"ke"
                + HOSTILE_YAML
                + "y\": 1\n"
                + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
                + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n"
                + "regions:\n  - {tenant: \"acme"
                + HOSTILE_YAML
                + "\", region: kv, size: 1MiB}\n");
    assertEquals(4, e.size(), e.toString());
    String all = String.join("\n", e);
    assertTrue(all.contains("port must be 0..65535 (0: any free port), got '7471" + ESCAPED), all);
    assertTrue(all.contains("must be one of soft, ibv, auto, got 'soft" + ESCAPED + "'"), all);
    assertTrue(all.contains("ke" + ESCAPED + "y: unknown key 'ke" + ESCAPED + "y'"), all);
    assertTrue(all.contains("regions[0].tenant: must be a name"), all);
    assertTrue(all.contains("got 'acme" + ESCAPED + "'"), all);
  }

  @Test
  void shouldEscapeTheFileNameWithABidiOverride() throws Exception {
    Path f = dir.resolve("serve\n\r\t\u202Eelif.yaml");
    List<String> e = refused(f, "version: 1\n");
    assertFalse(e.isEmpty());
    for (String line : e) {
      assertTrue(line.startsWith(dir + "/serve\\u000A\\u000D\\u0009\\u202Eelif.yaml"), line);
    }
  }

  @Test
  void shouldEscapeEveryErrorOfTheException() {
    ServeConfig.ConfigException e =
        new ServeConfig.ConfigException(List.of("f: k: got 'a\nb\r\tc\u202E'", "plain"));
    assertEquals(List.of("f: k: got 'a\\u000Ab\\u000D\\u0009c\\u202E'", "plain"), e.errors());
    assertEquals("2 error(s): f: k: got 'a\\u000Ab\\u000D\\u0009c\\u202E'; plain", e.getMessage());
  }

  @Test
  void shouldEscapePathsEchoedByTheSecondPass() throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(
        f,
        "version: 1\nlisten: 127.0.0.1:0\n"
            + "tls: {certificate: \"h"
            + HOSTILE_YAML
            + ".crt\", key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
            + "policy: {file: policy.yaml}\naudit: {file: audit.log}\n");
    ServeConfig c = ServeConfig.read(f);
    ServeConfig.ConfigException e =
        assertThrows(ServeConfig.ConfigException.class, () -> SecureRdmaServer.prepare(c));
    e.errors().forEach(ServeConfigEscapingTest::assertPrintable);
    assertPrintable(e.getMessage());
    assertTrue(
        e.errors().stream().anyMatch(l -> l.contains("tls.certificate: ") && l.contains(ESCAPED)),
        e.errors().toString());
  }

  @Test
  void shouldEscapeTheClusterSectionsErrors() throws Exception {
    List<String> e =
        refused(
            dir.resolve("cluster.yaml"),
            "version: 1\nlisten: 127.0.0.1:7471\n"
                + "tls: {certificate: h.crt, key: h.key, ca-certificate: ca.crt, crl: crl.pem}\n"
                + "policy: {file: policy.yaml, watch: false}\naudit: {file: audit.log}\n"
                + "cluster:\n  endpoints: [https://10.0.0.1:2379]\n  ca-certificate: e.crt\n"
                + "  certificate: c.crt\n  key: c.key\n  prefix: \"/srdma"
                + HOSTILE_YAML
                + "\"\n");
    assertEquals(1, e.size(), e.toString());
    assertTrue(e.get(0).contains("cluster.prefix: must look like"), e.get(0));
    assertTrue(e.get(0).contains("got '/srdma" + ESCAPED + "'"), e.get(0));
  }
}
