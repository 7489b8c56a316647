package io.srdma.cluster;

import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.auth.Permission;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * etcd access control for one deployment prefix: with {@code --client-cert-auth} and auth enabled,
 * etcd acts for a client as the user named by its certificate's CN, and these roles say what each
 * may do under {@code PREFIX/}:
 *
 * <pre>
 * role srdma-host:PREFIX:HOST   read       PREFIX/                  (policy, CRL, revocations, fleet state)
 *                               readwrite  PREFIX/hosts/HOST/       (its policy state, sessions, audit head)
 *                               readwrite  PREFIX/grants/HOST/      (its leased grants)
 *                               readwrite  PREFIX/requests/HOST/    (its console's revoke requests)
 * role srdma-operator:PREFIX    readwrite  PREFIX/                  (policy push, cert/grant revoke)
 * </pre>
 *
 * so a host's certificate can neither write the policy or the CRL, nor touch another host's keys;
 * its console revokes another host's grant by a request that host acts on ({@link
 * GrantDirectory#requestRevoke}). {@link #apply} creates the roles and users and grants exactly
 * these permissions (revoking any other of these roles' permissions); it is idempotent. Managing
 * users and roles needs etcd's root role once auth is on: run it with a certificate whose CN is
 * {@code root}.
 */
public final class ClusterRbac {
  /** etcd's root user and role. */
  public static final String ROOT = "root";

  // as cluster.host (ClusterConfig)
  private static final Pattern HOST = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,62}");
  private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");

  private ClusterRbac() {}

  /**
   * A host of the deployment and the etcd user (its certificate's CN) it acts as.
   *
   * @param host the host's name in the cluster ({@code cluster.host})
   * @param user the CN of the host's etcd client certificate
   */
  public record HostUser(String host, String user) {
    /** Checks both names. */
    public HostUser {
      if (host == null || !HOST.matcher(host).matches()) {
        throw new ClusterException(
            ClusterException.Reason.BAD_CONFIG,
            "a host name must look like host-1 ([a-z0-9][a-z0-9_.-]{0,62}), got '" + host + "'");
      }
      checkUser(user);
    }
  }

  /**
   * What {@link #apply} changed, one line each ("role … created", "… granted …"); empty if etcd
   * already held exactly this set-up.
   *
   * @param changes what was changed, in order
   * @param authEnabled whether etcd's auth is on at the end (only known when asked to enable it)
   */
  public record Result(List<String> changes, boolean authEnabled) {}

  /** The role of a host of a deployment. */
  public static String hostRole(String prefix, String host) {
    return "srdma-host:" + prefix + ":" + host;
  }

  /** The operators' role of a deployment. */
  public static String operatorRole(String prefix) {
    return "srdma-operator:" + prefix;
  }

  /** The permissions of a host's role (see the class comment). */
  static List<Permission> hostPermissions(String prefix, String host) {
    return List.of(
        prefixed(Permission.Type.READ, prefix + "/"),
        prefixed(Permission.Type.READWRITE, prefix + "/hosts/" + host + "/"),
        prefixed(Permission.Type.READWRITE, prefix + "/grants/" + host + "/"),
        prefixed(Permission.Type.READWRITE, prefix + "/requests/" + host + "/"));
  }

  /** The permissions of the operators' role. */
  static List<Permission> operatorPermissions(String prefix) {
    return List.of(prefixed(Permission.Type.READWRITE, prefix + "/"));
  }

  /**
   * Sets up the deployment's roles and users in etcd, idempotently.
   *
   * @param link a client acting as etcd's root user once auth is on (before, any client)
   * @param operator the CN of the operators' certificate(s) ({@code policy push}, {@code cert
   *     revoke --cluster}, {@code grant revoke --cluster})
   * @param hosts the deployment's hosts and their users
   * @param enableAuth also make sure user {@code root} (role root) exists and auth is on
   * @throws ClusterException {@code DENIED} if this client may not manage users and roles (auth is
   *     on and it is not root), {@code UNAVAILABLE} if etcd does not answer
   */
  public static Result apply(
      EtcdLink link, String operator, List<HostUser> hosts, boolean enableAuth) {
    checkUser(operator);
    String prefix = link.keys().prefix();
    Map<String, String> users = new LinkedHashMap<>(); // user -> role
    users.put(operator, operatorRole(prefix));
    for (HostUser h : hosts) {
      if (h.user().equals(operator) || h.user().equals(ROOT)) {
        throw new ClusterException(
            ClusterException.Reason.BAD_CONFIG,
            "host " + h.host() + "'s user '" + h.user() + "' is the operator's or root");
      }
      if (users.put(h.user(), hostRole(prefix, h.host())) != null) {
        throw new ClusterException(
            ClusterException.Reason.BAD_CONFIG,
            "user '" + h.user() + "' given twice: each host needs its own certificate CN");
      }
    }
    Auth auth = link.client().getAuthClient();
    List<String> changes = new ArrayList<>();
    List<String> roles = link.await(auth.roleList(), "listing etcd roles").getRoles();
    List<String> existing = link.await(auth.userList(), "listing etcd users").getUsers();
    ensureRole(link, auth, roles, operatorRole(prefix), operatorPermissions(prefix), changes);
    for (HostUser h : hosts) {
      ensureRole(
          link,
          auth,
          roles,
          hostRole(prefix, h.host()),
          hostPermissions(prefix, h.host()),
          changes);
    }
    for (Map.Entry<String, String> u : users.entrySet()) {
      ensureUser(link, auth, existing, u.getKey(), u.getValue(), changes);
    }
    if (enableAuth) {
      if (!roles.contains(ROOT)) {
        link.await(auth.roleAdd(bytes(ROOT)), "adding role root");
        changes.add("role root created");
      }
      ensureUser(link, auth, existing, ROOT, ROOT, changes);
      link.await(auth.authEnable(), "enabling auth");
    }
    return new Result(List.copyOf(changes), enableAuth);
  }

  private static void ensureRole(
      EtcdLink link,
      Auth auth,
      List<String> roles,
      String role,
      List<Permission> wanted,
      List<String> changes) {
    ByteSequence name = bytes(role);
    List<Permission> has = List.of();
    if (roles.contains(role)) {
      has = link.await(auth.roleGet(name), "reading role " + role).getPermissions();
    } else {
      link.await(auth.roleAdd(name), "adding role " + role);
      changes.add("role " + role + " created");
    }
    for (Permission p : has) {
      if (wanted.stream().noneMatch(w -> sameRange(w, p))) {
        link.await(
            auth.roleRevokePermission(name, p.getKey(), p.getRangeEnd()),
            "revoking a permission of " + role);
        changes.add("role " + role + ": " + describe(p) + " revoked");
      }
    }
    for (Permission w : wanted) {
      boolean present =
          has.stream().anyMatch(p -> sameRange(w, p) && p.getPermType() == w.getPermType());
      if (!present) {
        link.await(
            auth.roleGrantPermission(name, w.getKey(), w.getRangeEnd(), w.getPermType()),
            "granting a permission to " + role);
        changes.add("role " + role + ": " + describe(w) + " granted");
      }
    }
  }

  private static void ensureUser(
      EtcdLink link,
      Auth auth,
      List<String> users,
      String user,
      String role,
      List<String> changes) {
    ByteSequence name = bytes(user);
    List<String> has = List.of();
    if (users.contains(user)) {
      has = link.await(auth.userGet(name), "reading user " + user).getRoles();
    } else {
      // a password nobody knows: these users authenticate by their certificate's CN only
      link.await(auth.userAdd(name, bytes(randomPassword())), "adding user " + user);
      changes.add("user " + user + " created");
    }
    if (!has.contains(role)) {
      link.await(auth.userGrantRole(name, bytes(role)), "granting " + role + " to " + user);
      changes.add("user " + user + ": role " + role + " granted");
    }
  }

  private static boolean sameRange(Permission a, Permission b) {
    return a.getKey().equals(b.getKey()) && a.getRangeEnd().equals(b.getRangeEnd());
  }

  private static String describe(Permission p) {
    return p.getPermType().name().toLowerCase(java.util.Locale.ROOT)
        + " "
        + p.getKey().toString(StandardCharsets.UTF_8)
        + "*";
  }

  /** A permission on every key that starts with {@code prefix} (which ends in '/'). */
  private static Permission prefixed(Permission.Type type, String prefix) {
    byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
    end[end.length - 1]++; // '/' + 1: the end of the range of keys under the prefix
    return new Permission(type, bytes(prefix), ByteSequence.from(end));
  }

  private static String randomPassword() {
    byte[] b = new byte[32];
    new SecureRandom().nextBytes(b);
    return Base64.getEncoder().encodeToString(b);
  }

  static String checkUser(String user) {
    Objects.requireNonNull(user, "user");
    if (!USER.matcher(user).matches()) {
      throw new ClusterException(
          ClusterException.Reason.BAD_CONFIG,
          "an etcd user (a certificate CN) must be 1 to 64 of letters, digits, _ . @ -, got '"
              + user
              + "'");
    }
    return user;
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
