package io.srdma.policy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.shiro.authc.AuthenticationException;
import org.apache.shiro.authc.AuthenticationInfo;
import org.apache.shiro.authc.AuthenticationToken;
import org.apache.shiro.authc.IncorrectCredentialsException;
import org.apache.shiro.authc.SimpleAuthenticationInfo;
import org.apache.shiro.authc.UnknownAccountException;
import org.apache.shiro.authc.UsernamePasswordToken;
import org.apache.shiro.authc.credential.DefaultPasswordService;
import org.apache.shiro.authc.credential.PasswordMatcher;
import org.apache.shiro.authz.AuthorizationInfo;
import org.apache.shiro.authz.SimpleAuthorizationInfo;
import org.apache.shiro.crypto.hash.DefaultHashService;
import org.apache.shiro.realm.AuthorizingRealm;
import org.apache.shiro.subject.PrincipalCollection;

/**
 * Authenticates admin-console users against the Argon2 or bcrypt hashes of the policy in force,
 * through a Shiro realm and {@link PasswordMatcher}. Thread-safe; a reload shows at once.
 */
public final class ConsoleUsers {
  private final Supplier<Policy> policy;
  private final DefaultPasswordService passwords = new DefaultPasswordService();
  private final Realm realm = new Realm();
  private volatile String decoyHash;

  /**
   * Console users of a changing policy.
   *
   * @param policy the policy in force, e.g. {@code authority::policy}
   */
  public ConsoleUsers(Supplier<Policy> policy) {
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  /**
   * Checks a login. The password array is wiped before this returns. An unknown user costs the hash
   * work of one of the policy's users (the same one for the same name), whatever kinds of hashes
   * they have, so timing does not tell which users exist.
   *
   * @param user the user name
   * @param password the password; zeroed on return
   * @return the user's roles, or the failure
   */
  public ConsoleAuthResult authenticate(String user, char[] password) {
    UsernamePasswordToken token = new UsernamePasswordToken(user, password);
    try {
      realm.getAuthenticationInfo(token);
      ConsoleUser u = policy.get().consoleUsers().get(user);
      return u == null
          ? failed(user, ConsoleAuthResult.Failure.UNKNOWN_USER)
          : new ConsoleAuthResult(user, u.roles(), null);
    } catch (UnknownAccountException e) {
      try {
        passwords.passwordsMatch(password, decoy(user)); // only for its time: never a success
      } catch (RuntimeException ignored) {
        // a hash the policy reader let through but the matcher refuses: still an unknown user
      }
      return failed(user, ConsoleAuthResult.Failure.UNKNOWN_USER);
    } catch (IncorrectCredentialsException e) {
      return failed(user, ConsoleAuthResult.Failure.BAD_PASSWORD);
    } catch (AuthenticationException | IllegalArgumentException e) {
      return failed(user, ConsoleAuthResult.Failure.FAILED);
    } finally {
      token.clear();
    }
  }

  /**
   * Whether a user holds a console role in the policy in force.
   *
   * @param user the user name
   * @param role the role
   * @return true if the user exists and holds the role
   */
  public boolean hasRole(String user, ConsoleRole role) {
    return realm.hasRole(
        new org.apache.shiro.subject.SimplePrincipalCollection(user, Realm.NAME), role.token());
  }

  /**
   * Hashes a password for a policy file's {@code password-hash}, in Shiro 2 crypt format with a
   * random salt. The array is wiped before this returns.
   *
   * @param password the password
   * @param bcrypt bcrypt ({@code $shiro2$2y$...}) instead of the default Argon2id
   * @return the hash string
   */
  public static String hashPassword(char[] password, boolean bcrypt) {
    try {
      DefaultPasswordService service = new DefaultPasswordService();
      if (bcrypt) {
        DefaultHashService hashes = new DefaultHashService();
        hashes.setDefaultAlgorithmName("2y");
        service.setHashService(hashes);
      }
      return service.encryptPassword(password);
    } finally {
      java.util.Arrays.fill(password, '\0');
    }
  }

  private static ConsoleAuthResult failed(String user, ConsoleAuthResult.Failure f) {
    return new ConsoleAuthResult(user, Set.of(), f);
  }

  /**
   * The hash an unknown user's password is checked against, for the time it takes: the hash of one
   * of the policy's users, picked by the SHA-256 of the policy's and the name's, so that a name
   * always costs the same and the names that exist cannot be told by their cost from those that do
   * not (the users' hashes may be bcrypt, or Argon2 with other parameters, each costing its own
   * time). A policy without users: a fixed Argon2id decoy.
   */
  private String decoy(String user) {
    Policy p = policy.get();
    List<String> names = new ArrayList<>(p.consoleUsers().keySet());
    if (!names.isEmpty()) {
      Collections.sort(names);
      try {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        d.update(p.sha256().getBytes(StandardCharsets.UTF_8));
        d.update((byte) 0);
        d.update(user.getBytes(StandardCharsets.UTF_8));
        int pick = Math.floorMod(ByteBuffer.wrap(d.digest()).getInt(), names.size());
        ConsoleUser u = p.consoleUsers().get(names.get(pick));
        if (u != null) {
          return u.passwordHash();
        }
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("SHA-256 is required of every JVM", e);
      }
    }
    String h = decoyHash;
    if (h == null) {
      h = passwords.encryptPassword("decoy-password-never-matches");
      decoyHash = h;
    }
    return h;
  }

  private final class Realm extends AuthorizingRealm {
    static final String NAME = "srdma-console";

    Realm() {
      PasswordMatcher matcher = new PasswordMatcher();
      matcher.setPasswordService(passwords);
      setCredentialsMatcher(matcher);
      setName(NAME);
      setCachingEnabled(false);
      setAuthenticationCachingEnabled(false);
      setAuthorizationCachingEnabled(false);
    }

    @Override
    public boolean supports(AuthenticationToken token) {
      return token instanceof UsernamePasswordToken;
    }

    @Override
    protected AuthenticationInfo doGetAuthenticationInfo(AuthenticationToken token) {
      String name = ((UsernamePasswordToken) token).getUsername();
      ConsoleUser u = name == null ? null : policy.get().consoleUsers().get(name);
      if (u == null) {
        throw new UnknownAccountException("unknown console user");
      }
      return new SimpleAuthenticationInfo(name, u.passwordHash(), getName());
    }

    @Override
    protected AuthorizationInfo doGetAuthorizationInfo(PrincipalCollection principals) {
      SimpleAuthorizationInfo info = new SimpleAuthorizationInfo();
      ConsoleUser u =
          policy.get().consoleUsers().get(String.valueOf(principals.getPrimaryPrincipal()));
      if (u != null) {
        u.roles().forEach(r -> info.addRole(r.token()));
      }
      return info;
    }
  }
}
