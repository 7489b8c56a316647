package io.srdma.policy;

import java.util.List;

/**
 * A policy was rejected. Carries every error found, in file order; the policy in force did not
 * change.
 */
public final class PolicyRejectedException extends PolicyException {
  private static final long serialVersionUID = 1L;

  @SuppressWarnings("serial") // immutable list of records
  private final List<PolicyError> errors;

  /**
   * Creates the exception.
   *
   * @param errors the errors, at least one
   */
  public PolicyRejectedException(List<PolicyError> errors) {
    super(Category.INVALID_POLICY, summary(errors));
    this.errors = List.copyOf(errors);
  }

  /** Every error found, in file order. */
  public List<PolicyError> errors() {
    return errors;
  }

  private static String summary(List<PolicyError> errors) {
    StringBuilder b = new StringBuilder();
    b.append(errors.size()).append(errors.size() == 1 ? " error" : " errors");
    for (PolicyError e : errors) {
      b.append(System.lineSeparator()).append(e);
    }
    return b.toString();
  }
}
