package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** A host's report round-trips with its refusals, and an older host's report still reads. */
class HostPolicyStateTest {
  private static final Instant AT = Instant.parse("2026-12-01T02:40:11.204Z");

  @Test
  void shouldRoundTripTheRefusalCountAndTheLastRefusal() {
    HostPolicyState s =
        new HostPolicyState(
            "h1",
            "a".repeat(64),
            14,
            AT,
            false,
            3,
            new PolicyRefusal(PolicyRefusal.Reason.FOREIGN_DEPLOYMENT, 1764560411204L, AT));
    assertEquals(s, HostPolicyState.parse(s.toJson()));
    HostPolicyState none = new HostPolicyState("h2", "b".repeat(64), 0, AT, true);
    assertEquals(none, HostPolicyState.parse(none.toJson()));
  }

  @Test
  void shouldReadTheReportOfAHostWithoutRefusalFields() {
    String old =
        "{\"host\":\"h3\",\"sha256\":\""
            + "c".repeat(64)
            + "\",\"revision\":9,\"applied\":\"2026-12-01T01:12:40.551Z\",\"degraded\":false}";
    HostPolicyState s = HostPolicyState.parse(old.getBytes(StandardCharsets.UTF_8));
    assertEquals(0, s.refusals());
    assertNull(s.lastRefusal());
  }

  @Test
  void shouldRefuseAnUnknownReason() {
    String bad =
        "{\"host\":\"h3\",\"sha256\":\""
            + "c".repeat(64)
            + "\",\"revision\":9,\"applied\":\"2026-12-01T01:12:40.551Z\",\"degraded\":false,"
            + "\"refusals\":1,\"lastRefusal\":{\"reason\":\"bogus\",\"serial\":1,\"at\":\""
            + AT
            + "\"}}";
    ClusterException e =
        assertThrows(
            ClusterException.class,
            () -> HostPolicyState.parse(bad.getBytes(StandardCharsets.UTF_8)));
    assertEquals(ClusterException.Reason.MALFORMED, e.reason());
  }
}
