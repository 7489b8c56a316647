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

  private final boolean limitExceeded;

  /**
   * Creates the exception.
   *
   * @param errors the errors, at least one
   */
  public PolicyRejectedException(List<PolicyError> errors) {
    this(errors, false);
  }

  /**
   * Creates the exception.
   *
   * @param errors the errors, at least one
   * @param limitExceeded whether the text broke a limit meant for hostile input (size, nesting,
   *     node count, anchors and aliases, tags, characters), see {@link BoundedYaml}
   */
  public PolicyRejectedException(List<PolicyError> errors, boolean limitExceeded) {
    super(Category.INVALID_POLICY, summary(errors));
    this.errors = List.copyOf(errors);
    this.limitExceeded = limitExceeded;
  }

  /**
   * Whether the text broke a limit meant for hostile input rather than holding ordinary mistakes;
   * the console answers such text with 400.
   */
  public boolean limitExceeded() {
    return limitExceeded;
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
