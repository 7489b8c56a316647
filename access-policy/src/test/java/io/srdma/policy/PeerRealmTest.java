package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PeerRealmTest {
  private final GrantAuthority authority = new GrantAuthority(new PolicyLoader().loadSample());
  private final PeerRealm realm = new PeerRealm(authority::policy);

  @Test
  void shouldGiveShiroTheTenantScopedRolesAndPermissions() {
    var trainer = PeerRealm.principals("srdma://acme/trainer-3");
    assertTrue(realm.hasRole(trainer, "acme/trainer"));
    assertTrue(realm.isPermitted(trainer, "acme:region:write:kvcache"));
    assertFalse(realm.isPermitted(trainer, "globex:region:read:kvcache"));
    assertFalse(realm.isPermitted(trainer, "acme:region:write:checkpoints"));
    var nobody = PeerRealm.principals("srdma://acme/nobody");
    assertFalse(realm.isPermitted(nobody, "acme:region:read:kvcache"));
  }

  @Test
  void shouldAgreeWithTheAuthorityOnPermissions() {
    for (String id :
        Set.of(
            "srdma://acme/trainer-1",
            "srdma://acme/dashboard",
            "srdma://globex/inference-2",
            "srdma://globex/loader-1")) {
      String tenant = PeerIdentity.tenantOf(id);
      for (String region : Set.of("kvcache", "checkpoints", "features")) {
        for (Operation op : Operation.values()) {
          boolean shiro =
              realm.isPermitted(
                  PeerRealm.principals(id), tenant + ":region:" + op.token() + ":" + region);
          Decision d =
              authority.decide(
                  id, tenant, region, EnumSet.of(op), 0, 1, java.time.Duration.ofSeconds(1));
          boolean permitted = d.permission() != null;
          if (d.reason() != DecisionReason.UNKNOWN_REGION) {
            assertEquals(shiro, permitted, id + " " + op + " " + region + ": " + d.explain());
          }
        }
      }
    }
  }
}
