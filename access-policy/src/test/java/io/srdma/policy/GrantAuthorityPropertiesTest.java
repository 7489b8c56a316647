package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.apache.shiro.authz.Permission;

class GrantAuthorityPropertiesTest {
  private static final PolicyLoader LOADER = new PolicyLoader();
  private static final Policy SAMPLE = LOADER.loadSample();

  @Provide
  Arbitrary<String> wildcards() {
    Arbitrary<String> resource = Arbitraries.of("region", "*");
    Arbitrary<String> ops = Arbitraries.of("read", "write", "read,write", "write,read", "*");
    Arbitrary<String> regions = Arbitraries.of("kv", "feat", "kv,feat", "*", "feat,*");
    return Combinators.combine(resource, ops, regions, Arbitraries.integers().between(1, 3))
        .as(
            (r, o, g, parts) ->
                switch (parts) {
                  case 1 -> r;
                  case 2 -> r + ":" + o;
                  default -> r + ":" + o + ":" + g;
                });
  }

  @Provide
  Arbitrary<Set<Operation>> operations() {
    return Arbitraries.subsetOf(Operation.values()).ofMinSize(1).map(s -> EnumSet.copyOf(s));
  }

  @Provide
  Arbitrary<String> regions() {
    return Arbitraries.of("kv", "feat");
  }

  @Provide
  Arbitrary<String> anyText() {
    return Arbitraries.strings().all().ofMaxLength(40);
  }

  @Property(tries = 300)
  void shouldDenyByDefaultWhenNoPeerEntryMatches(
      @ForAll("anyText") String peer,
      @ForAll("regions") String region,
      @ForAll("operations") Set<Operation> ops,
      @ForAll @LongRange(min = -5, max = 5_000_000) long offset,
      @ForAll @LongRange(min = -5, max = 5_000_000) long length) {
    // the sample has no acme peer outside trainer-*, checkpointer and dashboard
    String identity = "srdma://acme/x" + peer;
    GrantAuthority a = new GrantAuthority(SAMPLE);
    Decision d = a.decide(identity, "acme", region, ops, offset, length, Duration.ofSeconds(1));
    assertFalse(d.allowed(), d.explain());
    assertEquals(null, d.effectiveTtl());
  }

  @Property(tries = 200)
  void shouldDenyAnyRequestUnderAPolicyWithoutPeers(
      @ForAll("anyText") String identity,
      @ForAll("regions") String region,
      @ForAll("operations") Set<Operation> ops) {
    Policy noPeers =
        LOADER.parse(
            "p",
            "version: 1\ntenants:\n  acme:\n    regions: {kv: {size: 1MiB}, feat: {size: 1MiB}}\n");
    Decision d =
        new GrantAuthority(noPeers)
            .decide(identity, "acme", region, ops, 0, 1, Duration.ofSeconds(1));
    assertFalse(d.allowed(), d.explain());
  }

  @Property(tries = 200)
  void shouldNeverLoseAccessByAddingAPermission(
      @ForAll @Size(min = 1, max = 3) List<@net.jqwik.api.From("wildcards") String> perms,
      @ForAll("wildcards") String added,
      @ForAll("regions") String region,
      @ForAll("operations") Set<Operation> ops) {
    List<String> more = new ArrayList<>(perms);
    more.add(added);
    Decision before = decideAcme(perms, "10m", region, ops, Duration.ofMinutes(1));
    Decision after = decideAcme(more, "10m", region, ops, Duration.ofMinutes(1));
    if (before.allowed()) {
      assertTrue(after.allowed(), before.explain() + " / " + after.explain());
    }
  }

  @Property(tries = 300)
  void shouldNeverMatchAnotherTenantsRegionWhateverTheWildcard(
      @ForAll @Size(min = 1, max = 4) List<@net.jqwik.api.From("wildcards") String> perms,
      @ForAll("regions") String region,
      @ForAll("operations") Set<Operation> ops,
      @ForAll("anyText") String peer) {
    GrantAuthority a = new GrantAuthority(LOADER.parse("p", PolicyYaml.twoTenants(perms, "1m")));
    // acme's peer asking for globex memory
    Decision cross =
        a.decide("srdma://acme/" + peer, "globex", region, ops, 0, 1, Duration.ofSeconds(1));
    assertFalse(cross.allowed(), cross.explain());
    // globex's own peer gets only globex's narrow role, never acme's wildcards
    Decision own =
        a.decide("srdma://globex/p" + peer, "globex", region, ops, 0, 1, Duration.ofSeconds(1));
    boolean readFeat = region.equals("feat") && ops.equals(EnumSet.of(Operation.READ));
    assertEquals(
        readFeat && PeerIdentity.belongsTo("srdma://globex/p" + peer, "globex"),
        own.allowed(),
        own.explain());
  }

  @Property(tries = 500)
  void shouldNeverImplyAnotherTenantWhateverTheScopedText(
      @ForAll("anyText") String written,
      @ForAll("regions") String region,
      @ForAll("operations") Set<Operation> ops) {
    Permission scoped;
    try {
      scoped = TenantScope.scoped("acme", written);
    } catch (IllegalArgumentException e) {
      return; // Shiro refuses the text: nothing to check
    }
    for (Operation op : ops) {
      assertFalse(scoped.implies(TenantScope.requested("globex", op, region)), written);
    }
  }

  @Property(tries = 300)
  void shouldClipEffectiveTtlToTheRoleMax(
      @ForAll @LongRange(min = 1, max = 10_000_000) long ttlMs,
      @ForAll("operations") Set<Operation> ops,
      @ForAll("regions") String region) {
    Duration ttl = Duration.ofMillis(ttlMs);
    Decision d = decideAcme(List.of("*"), "90s", region, ops, ttl);
    assertTrue(d.allowed(), d.explain());
    assertTrue(d.effectiveTtl().compareTo(Duration.ofSeconds(90)) <= 0);
    assertTrue(d.effectiveTtl().compareTo(ttl) <= 0);
    assertEquals(
        ttl.compareTo(Duration.ofSeconds(90)) <= 0 ? ttl : Duration.ofSeconds(90),
        d.effectiveTtl());
  }

  @Property(tries = 200)
  void shouldKeepEffectiveTtlWithinTheSampleRoles(
      @ForAll @LongRange(min = 1, max = 100_000_000) long ttlMs,
      @ForAll("operations") Set<Operation> ops,
      @ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 9) int who) {
    String identity =
        List.of(
                "srdma://acme/trainer-" + who,
                "srdma://acme/checkpointer",
                "srdma://acme/dashboard")
            .get(who % 3);
    for (String region : List.of("kvcache", "checkpoints")) {
      Decision d =
          new GrantAuthority(SAMPLE)
              .decide(identity, "acme", region, ops, 0, 1, Duration.ofMillis(ttlMs));
      if (d.allowed()) {
        Role role = SAMPLE.tenants().get("acme").roles().get(d.role());
        assertTrue(d.effectiveTtl().compareTo(role.maxTtl()) <= 0, d.explain());
      }
    }
  }

  private static Decision decideAcme(
      List<String> perms, String maxTtl, String region, Set<Operation> ops, Duration ttl) {
    GrantAuthority a = new GrantAuthority(LOADER.parse("p", PolicyYaml.twoTenants(perms, maxTtl)));
    return a.decide("srdma://acme/peer", "acme", region, ops, 0, 1, ttl);
  }
}
