package io.srdma.policy;

import java.util.Set;

/**
 * An admin-console user.
 *
 * @param name the login name
 * @param passwordHash a Shiro 2 crypt-format hash ({@code $shiro2$argon2id$...} or {@code
 *     $shiro2$2y$...}); never a password
 * @param roles the console roles
 */
public record ConsoleUser(String name, String passwordHash, Set<ConsoleRole> roles) {

  /** Copies the set so the user is immutable. */
  public ConsoleUser {
    roles = Set.copyOf(roles);
  }

  /** Leaves the hash out so that logging a user never leaks it. */
  @Override
  public String toString() {
    return "ConsoleUser[" + name + ", roles=" + roles + "]";
  }
}
