package io.srdma.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real etcd ({@link EtcdTestCluster}) set up as a deployment runs it: etcd auth on under one
 * prefix, with {@link ClusterRbac}'s roles for the operators ({@value #OPERATOR}) and for each host
 * (etcd user = host name = the CN of its certificate); links as root and as the operators open.
 * Each host's own link ({@link #link}) is opened on demand and closed with the fleet. One set-up
 * for the fleet tests that attack through a host's credentials (each had its own copy before). Not
 * thread-safe: one test's.
 */
final class RbacFleet implements AutoCloseable {
  /** The operators' etcd user (the CN of their certificate). */
  static final String OPERATOR = "operator";

  private final EtcdTestCluster etcd;
  private final String prefix;
  private final List<AutoCloseable> opened = new ArrayList<>();
  private EtcdLink root;
  private EtcdLink operator;

  private RbacFleet(EtcdTestCluster etcd, String prefix) {
    this.etcd = etcd;
    this.prefix = prefix;
    opened.add(etcd);
  }

  private void setUp(List<String> hosts) {
    root = open(etcd.clientConfigAs(EtcdTestCluster.ROOT, prefix, null));
    List<ClusterRbac.HostUser> users = new ArrayList<>();
    for (String h : hosts) {
      users.add(new ClusterRbac.HostUser(h, h));
    }
    ClusterRbac.apply(root, OPERATOR, users, true);
    operator = open(etcd.clientConfigAs(OPERATOR, prefix, null));
  }

  /**
   * Starts etcd in {@code dir} and sets up its users and roles for {@code hosts} under {@code
   * prefix} (skips, as {@link EtcdTestCluster#start} does, where there is no etcd).
   */
  static RbacFleet start(Path dir, String prefix, String... hosts) throws IOException {
    RbacFleet fleet = new RbacFleet(EtcdTestCluster.start(dir), prefix);
    try {
      fleet.setUp(List.of(hosts));
      return fleet;
    } catch (RuntimeException e) {
      fleet.close();
      throw e;
    }
  }

  /** The etcd cluster. */
  EtcdTestCluster etcd() {
    return etcd;
  }

  /** A link as etcd's root user. */
  EtcdLink root() {
    return root;
  }

  /** A link as the operators (a console, the CLI). */
  EtcdLink operator() {
    return operator;
  }

  /** A host's configuration: its own certificate (CN = {@code host}), the fleet's prefix. */
  ClusterConfig config(String host) {
    return etcd.clientConfigAs(host, prefix, host);
  }

  /** A link with a host's own credentials, closed with the fleet. */
  EtcdLink link(String host) {
    return open(config(host));
  }

  private EtcdLink open(ClusterConfig config) {
    EtcdLink link = EtcdLink.open(config);
    opened.add(link);
    return link;
  }

  /** Closes the links (last opened first), then stops etcd. */
  @Override
  public void close() {
    for (int i = opened.size() - 1; i >= 0; i--) {
      try {
        opened.get(i).close();
      } catch (Exception ignored) {
        // closing the rest
      }
    }
    opened.clear();
  }
}
