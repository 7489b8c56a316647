package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GrantAuthorityTest {
  static final Set<Operation> W = EnumSet.of(Operation.WRITE);
  static final Set<Operation> R = EnumSet.of(Operation.READ);
  static final Set<Operation> RW = EnumSet.of(Operation.READ, Operation.WRITE);
  static final Duration MIN = Duration.ofMinutes(1);

  private final Policy sample = new PolicyLoader().loadSample();
  private final GrantAuthority authority = new GrantAuthority(sample);

  private Decision decide(String id, String tenant, String region, Set<Operation> ops, long len) {
    return authority.decide(id, tenant, region, ops, 0, len, MIN);
  }

  @Test
  void shouldAllowWithTheRoleAndPermissionThatGaveIt() {
    Decision d = decide("srdma://acme/trainer-1", "acme", "kvcache", W, 4096);
    assertTrue(d.allowed(), d.explain());
    assertEquals("trainer", d.role());
    assertEquals("region:read,write:kvcache", d.permission());
    assertEquals(MIN, d.effectiveTtl());
    assertEquals(sample.sha256(), d.policySha256());
  }

  @Test
  void shouldClipTtlToTheRoleMax() {
    Decision d =
        authority.decide(
            "srdma://acme/trainer-7", "acme", "kvcache", RW, 0, 1, Duration.ofHours(5));
    assertTrue(d.allowed());
    assertEquals(Duration.ofMinutes(10), d.effectiveTtl());
  }

  @Test
  void shouldDenyAnotherTenantsRegionEvenWithTheSameName() {
    Decision d = decide("srdma://acme/trainer-1", "globex", "kvcache", R, 1);
    assertEquals(DecisionReason.TENANT_MISMATCH, d.reason());
    assertNull(d.effectiveTtl());
  }

  @Test
  void shouldDenyUnknownTenantPeerAndRegion() {
    assertEquals(
        DecisionReason.UNKNOWN_TENANT, decide("srdma://x/a", "initech", "kvcache", R, 1).reason());
    assertEquals(
        DecisionReason.UNKNOWN_PEER,
        decide("srdma://acme/intruder", "acme", "kvcache", R, 1).reason());
    assertEquals(
        DecisionReason.UNKNOWN_REGION,
        decide("srdma://acme/trainer-1", "acme", "secrets", R, 1).reason());
  }

  @Test
  void shouldDenyMalformedRequests() {
    String id = "srdma://acme/trainer-1";
    assertEquals(
        DecisionReason.INVALID_REQUEST,
        authority.decide(id, "acme", "kvcache", Set.of(), 0, 1, MIN).reason());
    assertEquals(
        DecisionReason.INVALID_REQUEST,
        authority.decide(id, "acme", "kvcache", W, -1, 1, MIN).reason());
    assertEquals(
        DecisionReason.INVALID_REQUEST,
        authority.decide(id, "acme", "kvcache", W, 0, 0, MIN).reason());
    assertEquals(
        DecisionReason.INVALID_REQUEST,
        authority.decide(id, "acme", "kvcache", W, 0, 1, Duration.ZERO).reason());
    assertEquals(
        DecisionReason.INVALID_REQUEST,
        authority.decide(null, "acme", "kvcache", W, 0, 1, MIN).reason());
  }

  @Test
  void shouldDenyRangesOutsideTheRegionWithoutOverflow() {
    String id = "srdma://acme/trainer-1";
    long size = 64L << 20;
    assertTrue(authority.decide(id, "acme", "kvcache", W, size - 1, 1, MIN).allowed());
    assertEquals(
        DecisionReason.OUT_OF_BOUNDS,
        authority.decide(id, "acme", "kvcache", W, size, 1, MIN).reason());
    assertEquals(
        DecisionReason.OUT_OF_BOUNDS,
        authority.decide(id, "acme", "kvcache", W, 1, Long.MAX_VALUE, MIN).reason());
    assertEquals(
        DecisionReason.OUT_OF_BOUNDS,
        authority.decide(id, "acme", "kvcache", W, Long.MAX_VALUE, 2, MIN).reason());
  }

  @Test
  void shouldDenyWithoutPermission() {
    Decision d = decide("srdma://acme/trainer-1", "acme", "checkpoints", W, 1);
    assertEquals(DecisionReason.NOT_PERMITTED, d.reason());
    assertNull(d.permission());
  }

  @Test
  void shouldDenyOperationsOutsideTheRoleScope() {
    String yaml = PolicyLoaderTest.MINIMAL.replace("[region:write:kv]", "[\"region:*:kv\"]");
    GrantAuthority a = new GrantAuthority(new PolicyLoader().parse("p", yaml));
    Decision d = a.decide("srdma://acme/w-1", "acme", "kv", R, 0, 1, MIN);
    assertEquals(DecisionReason.OPERATION_NOT_ALLOWED, d.reason());
    assertEquals("writer", d.role());
    assertEquals("region:*:kv", d.permission());
  }

  @Test
  void shouldDenyGrantsOverMaxBytes() {
    Decision d = decide("srdma://acme/trainer-1", "acme", "kvcache", W, (16L << 20) + 1);
    assertEquals(DecisionReason.TOO_LARGE, d.reason());
  }

  @Test
  void shouldTryRolesInOrder() {
    // checkpointer cannot read; observer (second) can
    Decision d = decide("srdma://acme/checkpointer", "acme", "kvcache", R, 1);
    assertTrue(d.allowed());
    assertEquals("observer", d.role());
    assertEquals(Duration.ofSeconds(30), d.effectiveTtl());
    Decision w = decide("srdma://acme/checkpointer", "acme", "checkpoints", W, 1 << 20);
    assertEquals("checkpointer", w.role());
  }

  @Test
  void shouldEnforceLiveGrantQuotaPerPeer() {
    String id = "srdma://acme/checkpointer";
    assertTrue(issue("g1", id, W).allowed());
    assertTrue(issue("g2", id, W).allowed());
    Decision third = issue("g3", id, W);
    assertEquals(DecisionReason.QUOTA_EXCEEDED, third.reason());
    assertEquals(2, authority.liveGrantCount(id));
    assertTrue(authority.release("g1").isPresent());
    assertFalse(authority.release("g1").isPresent());
    assertTrue(issue("g3", id, W).allowed());
    // another peer has its own quota
    assertTrue(issue("g4", "srdma://acme/trainer-1", W).allowed());
  }

  @Test
  void shouldRefuseADuplicateGrantId() {
    issue("dup", "srdma://acme/trainer-1", W);
    PolicyException e =
        assertThrows(PolicyException.class, () -> issue("dup", "srdma://acme/trainer-1", W));
    assertEquals(PolicyException.Category.ILLEGAL_ARGUMENT, e.category());
  }

  @Test
  void shouldForgetExpiredGrantsWhenCountingQuota() {
    MutableClock clock = new MutableClock();
    GrantAuthority a = new GrantAuthority(sample, clock);
    String id = "srdma://acme/checkpointer";
    for (String g : List.of("a", "b")) {
      assertTrue(a.issue(g, id, "acme", "checkpoints", W, 0, 1, Duration.ofSeconds(10)).allowed());
    }
    assertFalse(a.issue("c", id, "acme", "checkpoints", W, 0, 1, MIN).allowed());
    clock.now = clock.now.plusSeconds(11);
    assertTrue(a.issue("c", id, "acme", "checkpoints", W, 0, 1, MIN).allowed());
    assertEquals(1, a.liveGrantCount(id));
  }

  @Test
  void shouldReportLiveGrantsANarrowedPolicyForbids() {
    String id = "srdma://acme/trainer-1";
    assertTrue(issue("write-kv", id, W).allowed());
    assertTrue(issue("read-kv", id, R).allowed());
    assertTrue(authority.issue("big", id, "acme", "kvcache", R, 0, 8 << 20, MIN).allowed());
    assertTrue(issue("other", "srdma://acme/dashboard", R).allowed());

    String narrowed =
        new String(sampleBytes(), java.nio.charset.StandardCharsets.UTF_8)
            .replace("- region:read,write:kvcache", "- region:read:kvcache")
            .replace("max-bytes-per-grant: 16MiB", "max-bytes-per-grant: 4MiB");
    Policy next = new PolicyLoader().parse("narrowed", narrowed);
    ReloadResult r = authority.reload(next);

    assertEquals(sample, r.previous());
    assertEquals(next, authority.policy());
    assertEquals(
        List.of("write-kv", "big"), r.forbidden().stream().map(f -> f.grant().id()).toList());
    assertEquals(DecisionReason.NOT_PERMITTED, r.forbidden().get(0).reason());
    assertEquals(DecisionReason.TOO_LARGE, r.forbidden().get(1).reason());
  }

  @Test
  void shouldMarkWhatAReloadForbadeUntilItIsReleasedOrExpires() {
    MutableClock clock = new MutableClock();
    GrantAuthority a = new GrantAuthority(sample, clock);
    String id = "srdma://acme/trainer-1";
    assertTrue(a.issue("big", id, "acme", "kvcache", W, 0, 8 << 20, MIN).allowed());
    assertTrue(a.issue("gone", id, "acme", "kvcache", W, 0, 8 << 20, MIN).allowed());
    assertTrue(a.issue("small", id, "acme", "kvcache", W, 0, 1, MIN).allowed());
    String narrowed =
        new String(sampleBytes(), java.nio.charset.StandardCharsets.UTF_8)
            .replace("max-bytes-per-grant: 16MiB", "max-bytes-per-grant: 4MiB");
    a.reload(new PolicyLoader().parse("narrowed", narrowed));

    assertEquals(DecisionReason.TOO_LARGE, a.forbidden("big").orElseThrow().reason());
    assertTrue(a.forbidden("gone").isPresent());
    assertFalse(a.forbidden("small").isPresent(), "allowed by the new policy");
    assertFalse(a.forbidden("unknown").isPresent());

    a.release("big");
    assertFalse(a.forbidden("big").isPresent(), "released: the mark goes with the grant");
    clock.now = clock.now.plus(MIN).plusSeconds(1);
    assertTrue(a.issue("next", id, "acme", "kvcache", W, 0, 1, MIN).allowed()); // prunes expired
    assertFalse(a.forbidden("gone").isPresent(), "expired: the mark goes with the grant");
  }

  @Test
  void shouldReportGrantsOverANarrowedTtlOrQuota() {
    String id = "srdma://acme/trainer-1";
    for (int i = 0; i < 3; i++) {
      assertTrue(
          authority
              .issue("g" + i, id, "acme", "kvcache", R, 0, 1, Duration.ofMinutes(5))
              .allowed());
    }
    String narrowed =
        new String(sampleBytes(), java.nio.charset.StandardCharsets.UTF_8)
            .replace("max-ttl: 10m", "max-ttl: 20m")
            .replace("max-live-grants: 8", "max-live-grants: 2");
    ReloadResult r = authority.reload(new PolicyLoader().parse("n", narrowed));
    assertEquals(1, r.forbidden().size());
    assertEquals("g2", r.forbidden().get(0).grant().id());
    assertEquals(DecisionReason.QUOTA_EXCEEDED, r.forbidden().get(0).reason());

    String shorter =
        new String(sampleBytes(), java.nio.charset.StandardCharsets.UTF_8)
            .replace("max-ttl: 10m", "max-ttl: 1m");
    ReloadResult r2 = authority.reload(new PolicyLoader().parse("s", shorter));
    assertEquals(3, r2.forbidden().size());
    assertTrue(r2.forbidden().stream().allMatch(f -> f.reason() == DecisionReason.TTL_EXCEEDS_MAX));
  }

  private Decision issue(String gid, String id, Set<Operation> ops) {
    String region =
        id.contains("checkpointer") && ops.contains(Operation.WRITE) ? "checkpoints" : "kvcache";
    return authority.issue(gid, id, "acme", region, ops, 0, 1, MIN);
  }

  private static byte[] sampleBytes() {
    try (var in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      return in.readAllBytes();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static final class MutableClock extends Clock {
    Instant now = Instant.parse("2026-11-29T12:00:00Z");

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
