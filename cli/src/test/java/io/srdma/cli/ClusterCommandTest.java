package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.cluster.ClusterConfig;
import io.srdma.cluster.EtcdTestCluster;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code srdma cluster rbac} against a real 3-member etcd: it sets up the roles and turns auth on,
 * a second run changes nothing; then a host's certificate may neither manage roles, push a policy
 * nor revoke another host's grant (exit 1, etcd's refusal named), while the operator's may.
 */
@Timeout(120)
class ClusterCommandTest {
  private static final String PREFIX = "/srdma/cli-rbac";

  @TempDir Path dir;

  private Path yaml(String name, ClusterConfig c) throws Exception {
    Path f = dir.resolve(name + ".yaml");
    Files.writeString(
        f,
        "cluster:\n"
            + "  endpoints: ["
            + c.endpoints().stream().map(Object::toString).collect(Collectors.joining(", "))
            + "]\n"
            + "  ca-certificate: "
            + c.caCertificate()
            + "\n  certificate: "
            + c.certificate()
            + "\n  key: "
            + c.key()
            + "\n  prefix: "
            + PREFIX
            + "\n  server-name: localhost\n");
    return f;
  }

  @Test
  void shouldSetUpRbacSoAHostCannotActAsTheOperator() throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"))) {
      Path root = yaml("root", etcd.clientConfigAs(EtcdTestCluster.ROOT, PREFIX, null));
      Path operator = yaml("operator", etcd.clientConfigAs("operator", PREFIX, null));
      Path host1 = yaml("host-1", etcd.clientConfigAs("host-1", PREFIX, null));

      CliRun bad =
          CliRun.of(
              "cluster",
              "rbac",
              "--cluster",
              root.toString(),
              "--operator",
              "operator",
              "--hosts",
              "Host!");
      assertEquals(2, bad.exit(), bad.err());

      String[] rbac = {
        "cluster",
        "rbac",
        "--cluster",
        root.toString(),
        "--operator",
        "operator",
        "--hosts",
        "host-1,host-2=etcd-host-2",
        "--enable-auth"
      };
      CliRun first = CliRun.of(rbac);
      assertEquals(0, first.exit(), first.err());
      assertTrue(first.out().contains("user etcd-host-2 created"), first.out());
      assertTrue(first.out().contains("applied; auth is on"), first.out());
      CliRun again = CliRun.of(rbac);
      assertEquals(0, again.exit(), again.err());
      assertTrue(again.out().contains("unchanged; auth is on"), again.out());

      // host-1's certificate: no role management, no push, no other host's grant
      rbac[3] = host1.toString();
      CliRun asHost = CliRun.of(rbac);
      assertEquals(1, asHost.exit(), asHost.out());
      assertTrue(asHost.err().contains("permission denied for etcd user 'host-1'"), asHost.err());

      String sample;
      try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
        sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      Path policy = dir.resolve("policy.yaml");
      Files.writeString(policy, sample);
      Path ca = etcd.ca().directory();
      Path pass = dir.resolve("ca-pass");
      Files.writeString(pass, new String(etcd.caPassphrase()));
      CliRun push =
          CliRun.of(
              "policy",
              "push",
              policy.toString(),
              "--cluster",
              host1.toString(),
              "--ca",
              ca.toString(),
              "--ca-passphrase-file",
              pass.toString());
      assertEquals(1, push.exit(), push.out());
      assertTrue(push.err().contains("permission denied"), push.err());
      CliRun pushOp =
          CliRun.of(
              "policy",
              "push",
              policy.toString(),
              "--cluster",
              operator.toString(),
              "--ca",
              ca.toString(),
              "--ca-passphrase-file",
              pass.toString());
      assertEquals(0, pushOp.exit(), pushOp.err());

      CliRun revoke = CliRun.of("grant", "revoke", "--cluster", host1.toString(), "host-2", "5");
      assertEquals(1, revoke.exit(), revoke.out());
      assertTrue(revoke.err().contains("permission denied"), revoke.err());
      CliRun list = CliRun.of("grant", "list", "--cluster", host1.toString());
      assertEquals(0, list.exit(), list.err());
    }
  }
}
