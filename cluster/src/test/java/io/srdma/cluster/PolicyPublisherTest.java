package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code srdma policy push}: validated like {@code policy check}, written by compare-and-swap. */
@Timeout(90)
class PolicyPublisherTest {
  @TempDir Path dir;

  @Test
  void shouldValidateThenCompareAndSwapOnTheRevision() throws Exception {
    String sample;
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    PolicyLoader loader = new PolicyLoader();
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir);
        EtcdLink a = EtcdLink.open(etcd.clientConfig("/srdma/p", null));
        EtcdLink b = EtcdLink.open(etcd.clientConfig("/srdma/p", null))) {
      assertEquals(0, PolicyStatus.read(a).revision());
      assertNull(PolicyStatus.read(a).sha256());

      // an invalid file is refused before anything is sent, with file:line:column
      PolicyRejectedException bad =
          assertThrows(
              PolicyRejectedException.class,
              () ->
                  PolicyPublisher.push(
                      a,
                      "bad.yaml",
                      "version: 1\ntenants: 7\n".getBytes(StandardCharsets.UTF_8),
                      loader,
                      OptionalLong.empty(),
                      etcd.ca()));
      assertTrue(bad.getMessage().contains("bad.yaml:"), bad.getMessage());
      assertEquals(0, PolicyStatus.read(a).revision());

      PolicyPublisher.Pushed first =
          PolicyPublisher.push(
              a,
              "p.yaml",
              sample.getBytes(StandardCharsets.UTF_8),
              loader,
              OptionalLong.of(0),
              etcd.ca());
      assertTrue(first.changed());
      assertEquals(first.sha256(), PolicyStatus.read(b).sha256());

      // the same text again: nothing written
      PolicyPublisher.Pushed again =
          PolicyPublisher.push(
              b,
              "p.yaml",
              sample.getBytes(StandardCharsets.UTF_8),
              loader,
              OptionalLong.empty(),
              etcd.ca());
      assertFalse(again.changed());
      assertEquals(first.revision(), again.revision());

      // b pushes on top of what it read; a, still expecting the revision before b's write, loses
      byte[] v2 = (sample + "\n# v2\n").getBytes(StandardCharsets.UTF_8);
      byte[] v3 = (sample + "\n# v3\n").getBytes(StandardCharsets.UTF_8);
      PolicyPublisher.Pushed second =
          PolicyPublisher.push(
              b, "p.yaml", v2, loader, OptionalLong.of(first.revision()), etcd.ca());
      ClusterException lost =
          assertThrows(
              ClusterException.class,
              () ->
                  PolicyPublisher.push(
                      a, "p.yaml", v3, loader, OptionalLong.of(first.revision()), etcd.ca()));
      assertEquals(ClusterException.Reason.CONFLICT, lost.reason());
      assertTrue(lost.getMessage().contains("nothing was written"), lost.getMessage());
      assertEquals(second.sha256(), PolicyStatus.read(a).sha256());
      assertEquals(second.revision(), PolicyStatus.read(a).revision());
    }
  }
}
