package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;

class ConsoleUsersTest {
  private final GrantAuthority authority = new GrantAuthority(new PolicyLoader().loadSample());
  private final ConsoleUsers users = new ConsoleUsers(authority::policy);

  @Test
  void shouldAuthenticateArgon2AndBcryptUsers() {
    ConsoleAuthResult admin = users.authenticate("admin", "admin-demo".toCharArray());
    assertTrue(admin.succeeded(), String.valueOf(admin.failure()));
    assertEquals(Set.of(ConsoleRole.ADMIN), admin.roles());
    ConsoleAuthResult auditor = users.authenticate("auditor", "auditor-demo".toCharArray());
    assertTrue(auditor.succeeded(), String.valueOf(auditor.failure()));
    assertEquals(Set.of(ConsoleRole.AUDITOR), auditor.roles());
    assertTrue(users.hasRole("admin", ConsoleRole.ADMIN));
    assertFalse(users.hasRole("auditor", ConsoleRole.ADMIN));
  }

  @Test
  void shouldRefuseWrongPasswordsAndUnknownUsers() {
    ConsoleAuthResult bad = users.authenticate("admin", "admin-dem0".toCharArray());
    assertEquals(ConsoleAuthResult.Failure.BAD_PASSWORD, bad.failure());
    assertEquals(Set.of(), bad.roles());
    assertEquals(
        ConsoleAuthResult.Failure.UNKNOWN_USER,
        users.authenticate("mallory", "x".toCharArray()).failure());
    assertEquals(
        ConsoleAuthResult.Failure.BAD_PASSWORD,
        users.authenticate("auditor", new char[0]).failure());
  }

  @Test
  void shouldHashPasswordsThatThePolicyAcceptsAndLoginsMatch() {
    for (boolean bcrypt : new boolean[] {false, true}) {
      char[] pw = "s3cret-pw".toCharArray();
      String hash = ConsoleUsers.hashPassword(pw, bcrypt);
      assertArrayEquals(new char[pw.length], pw);
      assertTrue(hash.startsWith(bcrypt ? "$shiro2$2y$" : "$shiro2$argon2id$"), hash);
      Policy p =
          new PolicyLoader()
              .parse(
                  "p",
                  "version: 1\ntenants: {}\nconsole:\n  users:\n    ops:\n      password-hash: \""
                      + hash
                      + "\"\n      roles: [auditor]\n");
      ConsoleUsers u = new ConsoleUsers(() -> p);
      assertTrue(u.authenticate("ops", "s3cret-pw".toCharArray()).succeeded());
      assertFalse(u.authenticate("ops", "s3cret-pW".toCharArray()).succeeded());
    }
  }

  @Test
  void shouldWipeThePasswordArray() {
    char[] pw = "admin-demo".toCharArray();
    assertTrue(users.authenticate("admin", pw).succeeded());
    assertArrayEquals(new char[pw.length], pw);
  }
}
