package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docs/policy.md embeds the sample policy verbatim, so the documented example always loads. */
class PolicyDocsTest {
  private static final String BEGIN = "<!-- sample-policy.yaml: begin -->\n```yaml\n";
  private static final String END = "```\n<!-- sample-policy.yaml: end -->";

  @Test
  void shouldEmbedTheSamplePolicyVerbatim() throws Exception {
    Path doc = Path.of("..", "docs", "policy.md");
    assertTrue(Files.exists(doc), doc.toAbsolutePath().toString());
    String md = Files.readString(doc, StandardCharsets.UTF_8);
    int begin = md.indexOf(BEGIN);
    int end = md.indexOf(END);
    assertTrue(begin >= 0 && end > begin, "markers missing in " + doc);
    String embedded = md.substring(begin + BEGIN.length(), end);
    String sample;
    try (var in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertEquals(sample, embedded);
    assertEquals(2, new PolicyLoader().parse("policy.md", embedded).tenants().size());
  }
}
