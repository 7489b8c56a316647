package io.srdma.policy;

import java.util.Locale;
import java.util.Optional;

/** A one-sided RDMA operation a grant may allow on a region. */
public enum Operation {
  /** RDMA READ from the region. */
  READ,
  /** RDMA WRITE (with or without immediate) into the region. */
  WRITE;

  private final String token = name().toLowerCase(Locale.ROOT);

  /** The name used in policy files and permissions: {@code read}, {@code write}. */
  public String token() {
    return token;
  }

  /**
   * Parses a policy-file token.
   *
   * @param token {@code read} or {@code write}
   * @return the operation, or empty if the token names none
   */
  public static Optional<Operation> fromToken(String token) {
    for (Operation op : values()) {
      if (op.token.equals(token)) {
        return Optional.of(op);
      }
    }
    return Optional.empty();
  }
}
