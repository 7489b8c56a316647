package io.srdma.policy;

import java.util.Set;

/**
 * The result of a console login: the user's roles, or why it failed.
 *
 * @param user the user name as given
 * @param roles the user's console roles; empty on failure
 * @param failure null on success, else why it failed
 */
public record ConsoleAuthResult(String user, Set<ConsoleRole> roles, Failure failure) {

  /** Why a login failed. Show users one generic message; these are for the audit log. */
  public enum Failure {
    /** No such user in the policy in force. */
    UNKNOWN_USER,
    /** The password does not match the user's hash. */
    BAD_PASSWORD,
    /** Any other authentication failure (malformed input, hash service error). */
    FAILED
  }

  /** Copies the set so the result is immutable. */
  public ConsoleAuthResult {
    roles = Set.copyOf(roles);
  }

  /** Whether the login succeeded. */
  public boolean succeeded() {
    return failure == null;
  }
}
