package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class JsonPropertiesTest {

  @Provide
  Arbitrary<String> anything() {
    return Arbitraries.oneOf(
        Arbitraries.strings().all().ofMaxLength(200),
        Arbitraries.strings()
            .withChars("\"\\\n\r\t\b\f\u0000\u001f\u007f\u2028\ud800\udc00/{}:,")
            .ofMaxLength(50));
  }

  @Property(tries = 1000)
  void shouldRoundTripAnyStringAsOnePrintableAsciiLine(@ForAll("anything") String s) {
    StringBuilder b = new StringBuilder("{\"v\":");
    Json.string(b, s);
    b.append('}');
    String line = b.toString();
    assertTrue(line.chars().allMatch(c -> c >= 0x20 && c < 0x7f), line);
    Map<String, Object> parsed = AuditLogTest.parse(line);
    assertEquals(s, parsed.get("v"));
  }

  @Example
  void shouldEscapeUnpairedSurrogatesAndLineSeparators() {
    StringBuilder b = new StringBuilder();
    Json.string(b, "a\ud800b\u2028\"\\\n");
    assertEquals("\"a\\ud800b\\u2028\\\"\\\\\\n\"", b.toString());
  }
}
