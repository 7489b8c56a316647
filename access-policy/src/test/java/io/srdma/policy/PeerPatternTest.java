package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PeerPatternTest {
  @Test
  void shouldMatchPrefixAndSuffixAroundTheStar() {
    PeerPattern p = PeerPattern.of("srdma://acme/trainer-*");
    assertTrue(p.matches("srdma://acme/trainer-1"));
    assertTrue(p.matches("srdma://acme/trainer-"));
    assertFalse(p.matches("srdma://acme/trainer"));
    assertFalse(p.matches("srdma://acme/xtrainer-1"));
    assertTrue(PeerPattern.of("srdma://acme/*-gpu").matches("srdma://acme/n1-gpu"));
    assertFalse(PeerPattern.of("srdma://acme/a*a").matches("srdma://acme/a"));
  }

  @Test
  void shouldDetectOverlapExactly() {
    assertTrue(overlap("srdma://acme/trainer-*", "srdma://acme/*-1"));
    assertTrue(overlap("srdma://acme/*", "srdma://acme/t*"));
    assertFalse(overlap("srdma://acme/a*", "srdma://acme/b*"));
    assertFalse(overlap("srdma://acme/*-x", "srdma://acme/*-y"));
    assertTrue(overlap("srdma://acme/a*", "srdma://acme/a"));
    assertFalse(overlap("srdma://acme/a", "srdma://acme/b"));
  }

  private static boolean overlap(String a, String b) {
    boolean ab = PeerPattern.of(a).overlaps(PeerPattern.of(b));
    assertTrue(ab == PeerPattern.of(b).overlaps(PeerPattern.of(a)), "symmetric");
    return ab;
  }
}
