package io.srdma.host;

/**
 * Reads settings of {@link HostOptions} that only the host reads (package-private), so that the
 * server's tests can check what its configuration handed to the host.
 */
public final class HostOptionsProbe {
  private HostOptionsProbe() {}

  /** {@link HostOptions#connectThreads(int)} as set. */
  public static int connectThreads(HostOptions o) {
    return o.connectThreads();
  }

  /** {@link HostOptions#maxConnectsPerTenant(int)} as set. */
  public static int maxConnectsPerTenant(HostOptions o) {
    return o.maxConnectsPerTenant();
  }

  /** {@link HostOptions#authFailuresPerMinute(int)} as set. */
  public static int authFailuresPerMinute(HostOptions o) {
    return o.authFailuresPerMinute();
  }

  /** {@link HostOptions#workerThreads(int)} as set. */
  public static int workerThreads(HostOptions o) {
    return o.workerThreads();
  }
}
