package io.srdma.policy.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyError;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import java.nio.charset.StandardCharsets;

/**
 * Coverage-guided fuzzing of policy loading: arbitrary bytes as a policy file. The only outcomes
 * allowed are a valid {@link Policy} or a {@link PolicyRejectedException} whose every error names
 * the file, a line and a column inside the text, and a reason. Any other exception (including
 * another {@link io.srdma.policy.PolicyException} category, a YAML library exception leaking out, a
 * stack overflow from deep nesting) is a finding.
 */
class PolicyLoaderFuzzTest {
  private static final String LABEL = "fuzz.yaml";
  private static final PolicyLoader LOADER = new PolicyLoader();

  @FuzzTest(maxDuration = "5m")
  void parsePolicy(byte[] input) {
    Policy policy;
    try {
      policy = LOADER.parse(LABEL, input);
    } catch (PolicyRejectedException e) {
      assertFalse(e.errors().isEmpty(), "rejected without an error");
      int lines = lines(input);
      for (PolicyError error : e.errors()) {
        assertEquals(LABEL, error.source());
        assertTrue(error.line() >= 1 && error.line() <= lines, () -> "line out of range: " + error);
        assertTrue(error.column() >= 1, () -> "column out of range: " + error);
        assertNotNull(error.reason());
        assertFalse(error.reason().isBlank(), () -> "no reason: " + error);
      }
      return;
    }
    assertNotNull(policy);
    assertNotNull(policy.toString());
    assertNotNull(policy.tenants());
  }

  /** Lines of the text (a last line without a newline counts; an empty file has one line). */
  private static int lines(byte[] input) {
    String text = new String(input, StandardCharsets.UTF_8);
    int n = 1;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\n' || c == '\r' || c == '\u0085' || c == '\u2028' || c == '\u2029') {
        n++;
      }
    }
    return n;
  }
}
