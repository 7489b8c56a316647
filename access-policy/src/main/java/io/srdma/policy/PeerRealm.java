package io.srdma.policy;

import java.util.Objects;
import java.util.function.Supplier;
import org.apache.shiro.authc.AuthenticationInfo;
import org.apache.shiro.authc.AuthenticationToken;
import org.apache.shiro.authz.AuthorizationInfo;
import org.apache.shiro.authz.SimpleAuthorizationInfo;
import org.apache.shiro.realm.AuthorizingRealm;
import org.apache.shiro.subject.PrincipalCollection;
import org.apache.shiro.subject.SimplePrincipalCollection;

/**
 * Shiro's view of peers: for a peer identity, the roles ({@code tenant/role}) and tenant-scoped
 * permissions of the peer entry that matches it in the policy in force. Lets Shiro-based code (the
 * console) ask {@code isPermitted(principals("srdma://acme/t-1"), "acme:region:write:kv")}.
 *
 * <p>Peers authenticate by mutual TLS, never through this realm: it supports no token. Nothing is
 * cached, so a reload shows at once.
 */
public final class PeerRealm extends AuthorizingRealm {
  /** The realm name. */
  public static final String NAME = "srdma-peers";

  private final Supplier<Policy> policy;

  /**
   * A realm over a changing policy.
   *
   * @param policy the policy in force, e.g. {@code authority::policy}
   */
  public PeerRealm(Supplier<Policy> policy) {
    this.policy = Objects.requireNonNull(policy, "policy");
    setName(NAME);
    setCachingEnabled(false);
    setAuthorizationCachingEnabled(false);
  }

  /**
   * The principals of a peer.
   *
   * @param identity the peer identity
   * @return principals this realm understands
   */
  public static PrincipalCollection principals(String identity) {
    return new SimplePrincipalCollection(identity, NAME);
  }

  @Override
  public boolean supports(AuthenticationToken token) {
    return false;
  }

  @Override
  protected AuthenticationInfo doGetAuthenticationInfo(AuthenticationToken token) {
    return null;
  }

  @Override
  protected AuthorizationInfo doGetAuthorizationInfo(PrincipalCollection principals) {
    SimpleAuthorizationInfo info = new SimpleAuthorizationInfo();
    Object primary = principals.getPrimaryPrincipal();
    String identity = primary instanceof String s ? s : null;
    String tenant = PeerIdentity.tenantOf(identity);
    Tenant t = tenant == null ? null : policy.get().tenants().get(tenant);
    PeerEntry entry = t == null ? null : t.peerFor(identity);
    if (entry != null) {
      for (Role role : entry.roles()) {
        info.addRole(tenant + "/" + role.name());
        role.permissions().forEach(p -> info.addObjectPermission(p.scoped()));
      }
    }
    return info;
  }
}
