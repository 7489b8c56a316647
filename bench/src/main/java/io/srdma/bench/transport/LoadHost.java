package io.srdma.bench.transport;

import io.srdma.host.HostStats;
import io.srdma.host.RegionHost;
import java.net.InetSocketAddress;

/**
 * The host of a {@link LoadRun} as the run drives it: a {@link RegionHost} in the run's process, or
 * one in a child process ({@link LoadHostProcess}, {@code --host-process}).
 */
interface LoadHost extends AutoCloseable {
  /** Where clients connect. */
  InetSocketAddress address();

  HostStats stats();

  /** {@link RegionHost#revoke}. */
  boolean revoke(long grantId, String actor);

  @Override
  void close();

  /** A host in this process. */
  static LoadHost of(RegionHost host) {
    return new LoadHost() {
      @Override
      public InetSocketAddress address() {
        return host.address();
      }

      @Override
      public HostStats stats() {
        return host.stats();
      }

      @Override
      public boolean revoke(long grantId, String actor) {
        return host.revoke(grantId, actor);
      }

      @Override
      public void close() {
        host.close();
      }
    };
  }
}
