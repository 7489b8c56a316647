package io.srdma.verbs;

/**
 * Which provider the contract suite runs on: system property {@code srdma.test.provider}, default
 * {@code soft}. The same tests run on {@code ibv} inside the Soft-RoCE guest.
 */
public final class TestProviders {
  /** System property naming the provider under test. */
  public static final String PROP = "srdma.test.provider";

  private TestProviders() {}

  /** The provider under test. */
  public static String name() {
    return System.getProperty(PROP, "soft");
  }

  /** The first device of the provider under test. */
  public static Device device() {
    return RdmaProviders.firstDevice(name());
  }
}
