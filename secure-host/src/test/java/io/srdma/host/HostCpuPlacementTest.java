package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import io.srdma.verbs.CpuAffinity;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.DeviceOptions;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HostOptions#openerCpus}: records are opened on the CPUs asked for; a set that cannot be
 * had fails the start and leaves nothing running or bound.
 */
class HostCpuPlacementTest {
  @TempDir Path dir;

  @Test
  void recordsAreOpenedOnTheCpusAsked() throws Exception {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    CpuSet all = CpuAffinity.current();
    assumeTrue(all.size() >= 2, "needs 2 CPUs to tell a pinned thread from an unpinned one");
    CpuSet last = CpuSet.of(all.toArray()[all.size() - 1]);
    try (ChannelRig rig =
        new ChannelRig(
            dir,
            o ->
                o.openerThreads(2)
                    .openerCpus(last)
                    .device(new DeviceOptions().responderCpus(last)))) {
      Set<CpuSet> seen = ConcurrentHashMap.newKeySet();
      Set<String> threads = ConcurrentHashMap.newKeySet();
      rig.acmeKv.onRecord(
          r -> {
            seen.add(CpuAffinity.current());
            threads.add(Thread.currentThread().getName());
          });
      for (String peer : new String[] {"trainer-1", "trainer-2"}) { // one session per opener
        SecureRdmaClient c = rig.client("acme", peer);
        RemoteGrant g =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
        for (int i = 0; i < 8; i++) {
          g.writeBlocking(i * 64L, ByteBuffer.allocate(64));
        }
      }
      ChannelRig.await(() -> threads.size() == 2, "records opened on both openers");
      assertEquals(Set.of(last), seen, "the CPUs of the threads that opened the records");
    }
  }

  @Test
  void aSetTheOpenersCannotHaveFailsTheStartAndLeavesNothing() throws Exception {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    assumeTrue(!CpuAffinity.current().contains(CpuSet.MAX_CPU), "this machine has CPU 1023");
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    try (AuditLog log = AuditLog.open(dir.resolve("audit.jsonl"))) {
      HostOptions o =
          new HostOptions()
              .credential(
                  ca.issuePeer(PeerIdentity.of(RegionHost.HOST_TENANT, "h"), Duration.ofDays(1)))
              .trust(ca.trust())
              .policy(new PolicyLoader().loadSample())
              .audit(new AuditTrail(log))
              .bind(new InetSocketAddress("127.0.0.1", port))
              .openerCpus(CpuSet.of(CpuSet.MAX_CPU));
      Set<Thread> before = hostThreads();
      ChannelException e = assertThrows(ChannelException.class, () -> RegionHost.start(o));
      assertEquals(ChannelException.Reason.INVALID_ARGUMENT, e.reason());
      assertTrue(e.getMessage().contains("openerCpus 1023"), e.getMessage());
      for (Thread t : hostThreads()) {
        if (!before.contains(t)) {
          t.join(10_000); // executors' threads end just after shutdownNow returns
        }
      }
      assertEquals(before, hostThreads(), "threads left by the failed start");
      try (ServerSocket again = new ServerSocket(port, 1, o.bind().getAddress())) {
        assertEquals(port, again.getLocalPort(), "the control-plane port was released");
      }
    }
  }

  private static Set<Thread> hostThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith("srdma-"))
        .collect(Collectors.toSet());
  }
}
