package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A double-quoted scalar's escapes ({@code "\e"}, {@code "\n"}, <code>"&#92;u202E"</code>) spell
 * characters the raw text does not hold. Those the raw text may not hold are refused in keys and
 * values as a hostile-input limit, naming the code point and where it is, never the character; the
 * rest (line feed, carriage return, tab) meet the ordinary name and value rules, and every error
 * reason that quotes them prints them escaped. No message carries a control or bidirectional
 * character.
 */
class EscapedCharactersTest {
  private static final String HEAD = "version: 1\ntenants:\n";

  /** YAML escape, the code point it spells, and how the refusal describes it. */
  private static final String[][] FORBIDDEN = {
    {"\\e", "U+001B", "a control character"},
    {"\\a", "U+0007", "a control character"},
    {"\\x07", "U+0007", "a control character"},
    {"\\0", "U+0000", "a control character"},
    {"\\b", "U+0008", "a control character"},
    {"\\x7F", "U+007F", "a control character"},
    {"\\N", "U+0085", "a control character"},
    {"\\u202E", "U+202E", "a bidirectional control"},
    {"\\u2066", "U+2066", "a bidirectional control"},
    {"\\u061C", "U+061C", "a bidirectional control"},
    {"\\uFDD0", "U+FDD0", "a non-character"},
    {"\\U0001FFFE", "U+1FFFE", "a non-character"},
    {"\\uFEFF", "U+FEFF", "a byte-order mark after the start"},
  };

  @Test
  void shouldRefuseForbiddenCharactersSpelledByEscapesInKeys() {
    for (String[] c : FORBIDDEN) {
      // also at the very start of the key: a byte-order mark there is still not the file's start
      for (String key : List.of("\"x" + c[0] + "y\"", "\"" + c[0] + "y\"")) {
        PolicyRejectedException e = reject(HEAD + "  " + key + ": {}\n");
        assertOneLimitError(
            e, "p:3:3: character " + c[1] + " (" + c[2] + ") is not allowed in a key", c[0]);
      }
    }
  }

  @Test
  void shouldRefuseForbiddenCharactersSpelledByEscapesInValues() {
    for (String[] c : FORBIDDEN) {
      String id = "\"srdma://acme/w-" + c[0] + "*\"";
      assertOneLimitError(
          reject(PolicyLoaderTest.MINIMAL.replace("srdma://acme/w-*", id)),
          "p:14:19: character "
              + c[1]
              + " ("
              + c[2]
              + ") is not allowed in the value of 'identity'",
          c[0]);
      String perm = "\"region:write:kv" + c[0] + "\"";
      assertOneLimitError(
          reject(PolicyLoaderTest.MINIMAL.replace("region:write:kv", perm)),
          "p:8:23: character " + c[1] + " (" + c[2] + ") is not allowed in a list item",
          c[0]);
    }
    // a document that is one scalar
    assertOneLimitError(
        reject("\"\\e[2J\"\n"),
        "p:1:1: character U+001B (a control character) is not allowed in the document",
        "root");
  }

  @Test
  void shouldRefuseTheReviewersForgedLogLine() {
    // clears the screen, retitles the terminal, rings the bell, forges a log line, reverses text
    String yaml =
        "version: 1\ntenants: {}\n\"x\\e[2J\\e]0;pwned\\a\\nINFO forged line \\u202Eabc\": 1\n";
    assertOneLimitError(
        reject(yaml),
        "p:3:1: character U+001B (a control character) is not allowed in a key"
            + " (written as an escape)",
        "forged");
  }

  @Test
  void shouldPrintLineBreaksAndTabsFromEscapesEscaped() {
    // the raw text may hold LF, CR and tab, so escapes may too; no name or value accepts them,
    // and the reasons that quote them print them as \\u000A, \\u000D and \\u0009
    PolicyRejectedException key = reject(HEAD + "  acme: {}\n\"x\\nINFO forged\\r\": 1\n");
    assertFalse(key.limitExceeded(), key.getMessage());
    assertEquals(
        "p:4:1: unknown key 'x\\u000AINFO forged\\u000D' in the policy"
            + " (expected version, tenants, console)",
        only(key).toString());
    assertPrintable(key);

    PolicyRejectedException tenant = reject(HEAD + "  \"ac\\tme\\r\\n\": {}\n");
    assertTrue(
        only(tenant).reason().startsWith("tenant name 'ac\\u0009me\\u000D\\u000A' must be 1-63"),
        tenant.getMessage());
    assertPrintable(tenant);

    String id = "\"srdma://acme/w-*\\nINFO granted\"";
    PolicyRejectedException value =
        reject(PolicyLoaderTest.MINIMAL.replace("srdma://acme/w-*", id));
    assertEquals(
        "p:14:19: peer identity 'srdma://acme/w-*\\u000AINFO granted'"
            + " is not srdma://<tenant>/<peer>",
        only(value).toString());
    assertPrintable(value);

    // a literal block scalar holds line feeds without any escape
    PolicyRejectedException block =
        reject(
            PolicyLoaderTest.MINIMAL.replace(
                "[region:write:kv]", "\n          - |\n            a\n            b"));
    assertTrue(
        only(block).reason().startsWith("permission 'a\\u000Ab\\u000A' may hold"),
        block.getMessage());
  }

  @Test
  void shouldKeepPrintableNonAsciiTextAsItIs() {
    // no policy name accepts non-ASCII, before or now: the same ordinary error, quoted verbatim,
    // whether the name is written raw or as an escape
    for (String name : List.of("café", "\"caf\\u00e9\"", "\"caf\\xe9\"")) {
      PolicyRejectedException e = reject(HEAD + "  " + name + ": {}\n");
      assertFalse(e.limitExceeded(), e.getMessage());
      assertTrue(only(e).reason().startsWith("tenant name 'café' must be 1-63"), e.getMessage());
    }
    PolicyRejectedException cjk = reject(HEAD + "  \"\\u540d\\U0001F600\": {}\n");
    assertTrue(
        only(cjk).reason().startsWith("tenant name '名\uD83D\uDE00' must be"), cjk.getMessage());
    // non-ASCII comments and harmless escapes ("\x2A" is '*') in a valid policy still load
    String yaml =
        "# politique d'accès, 名前 \uD83D\uDE00\n"
            + PolicyLoaderTest.MINIMAL.replace("srdma://acme/w-*", "\"srdma://acme/w-\\x2A\"");
    assertTrue(
        new PolicyLoader().parse("p", yaml).tenants().get("acme").peerFor("srdma://acme/w-1")
            != null);
    new PolicyLoader().loadSample();
  }

  @Test
  void shouldAcceptPrintableEscapesInAnyBoundedYamlDocument() throws Exception {
    // the srdma serve and cluster configurations read through BoundedYaml too
    assertTrue(
        BoundedYaml.compose("c", "\"caf\\u00e9\": \"\\u540d \\U0001F600 \\t\\n\\r\"\n", 1000)
            != null);
    BoundedYaml.RejectedException e =
        assertThrows(
            BoundedYaml.RejectedException.class,
            () -> BoundedYaml.compose("c", "provider: \"so\\u202Eft\"\n", 1000));
    BoundedYaml.Problem p = e.problems().get(0);
    assertEquals(List.of(1, 11), List.of(p.line(), p.column()));
    assertTrue(p.limit());
    assertEquals(
        "character U+202E (a bidirectional control) is not allowed in the value of 'provider'"
            + " (written as an escape)",
        p.reason());
    // a long key is cut, never half a surrogate pair
    String key = "k".repeat(63) + "\uD83D\uDE00" + "k".repeat(100);
    String reason =
        assertThrows(
                BoundedYaml.RejectedException.class,
                () -> BoundedYaml.compose("c", key + ": \"\\e\"\n", 1000))
            .problems()
            .get(0)
            .reason();
    assertTrue(reason.contains("'" + "k".repeat(63) + "...'"), reason);
  }

  @Test
  void shouldBoundAReasonQuotingManyEscapedCharacters() {
    String yaml = "version: \"" + "\\n".repeat(100_000) + "\"\ntenants: {}\n";
    PolicyRejectedException e = reject(yaml);
    assertTrue(e.getMessage().length() < 1000, "message of " + e.getMessage().length());
    assertPrintable(e);
    // the cut never leaves half a surrogate pair (one of the two lands on a pair's middle)
    for (String pad : List.of("", "x")) {
      String pairs = "version: \"" + pad + "\uD83D\uDE00".repeat(200) + "\"\ntenants: {}\n";
      String reason = only(reject(pairs)).reason();
      assertTrue(reason.endsWith("\uD83D\uDE00..."), reason);
    }
  }

  private static PolicyRejectedException reject(String yaml) {
    PolicyRejectedException e =
        assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().parse("p", yaml));
    assertEquals(PolicyException.Category.INVALID_POLICY, e.category());
    return e;
  }

  private static PolicyError only(PolicyRejectedException e) {
    assertEquals(1, e.errors().size(), e.getMessage());
    return e.errors().get(0);
  }

  private static void assertOneLimitError(PolicyRejectedException e, String prefix, String what) {
    PolicyError error = only(e);
    assertTrue(e.limitExceeded(), what + ": " + e.getMessage());
    assertTrue(error.toString().startsWith(prefix), what + ": " + error);
    assertTrue(error.reason().endsWith(" (written as an escape)"), what + ": " + error);
    assertPrintable(e);
  }

  /** Nothing in the message but printable text and the line breaks between errors. */
  static void assertPrintable(PolicyRejectedException e) {
    String m = e.getMessage().replace(System.lineSeparator(), " ");
    for (int i = 0; i < m.length(); ) {
      int cp = m.codePointAt(i);
      int type = Character.getType(cp);
      if (Character.isISOControl(cp)
          || type == Character.FORMAT
          || type == Character.LINE_SEPARATOR
          || type == Character.PARAGRAPH_SEPARATOR
          || type == Character.SURROGATE) {
        fail(String.format("U+%04X at %d in the message: %s", cp, i, m.replace((char) cp, '?')));
      }
      i += Character.charCount(cp);
    }
  }
}
