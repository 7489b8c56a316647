package io.srdma.cluster;

import io.etcd.jetcd.kv.GetResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What the deployment's policy is and what each host runs ({@code srdma policy status}). */
public final class PolicyStatus {
  private PolicyStatus() {}

  /**
   * The largest value under {@code hosts/HOST/} read: a host writes a policy report, a session
   * count and an audit head (each under 1 KiB), so 64 KiB is ample margin.
   */
  static final int MAX_HOST_VALUE_BYTES = 64 * 1024;

  /**
   * The deployment's view.
   *
   * @param revision the policy key's revision (0: no policy was ever pushed)
   * @param sha256 the pushed policy's hash, or null
   * @param hosts each host's report, by name
   * @param sessions each host's live session count as it last published it, by name
   */
  public record View(
      long revision, String sha256, List<HostPolicyState> hosts, Map<String, Integer> sessions) {}

  /**
   * Reads the policy key and every host's report (paged range reads). A report counts only under
   * {@code hosts/HOST/policy} of the host it names (one host cannot report for another).
   *
   * @throws ClusterException {@code UNAVAILABLE} if etcd does not answer
   */
  public static View read(EtcdLink link) {
    GetResponse p = link.await(link.client().getKVClient().get(link.keys().policy()), "policy");
    long rev = 0;
    String sha = null;
    if (!p.getKvs().isEmpty()) {
      rev = p.getKvs().get(0).getModRevision();
      byte[] value = p.getKvs().get(0).getValue().getBytes();
      try {
        // the hash of the policy text, as hosts report it (hosts check the signature, not this)
        value = SignedPolicy.parse(value).policy();
      } catch (ClusterException e) {
        // an unsigned value: hosts refuse it; show the hash of what is there
      }
      sha = sha256(value);
    }
    List<HostPolicyState> hosts = new ArrayList<>();
    Map<String, Integer> sessions = new TreeMap<>();
    // paged, and a value no host writes is skipped: one host's junk under its own hosts/HOST/
    // does not hide the others (EtcdRange)
    EtcdRange.scan(
        link,
        link.keys().hostsPrefix(),
        false,
        MAX_HOST_VALUE_BYTES,
        "host states",
        kv -> {
          // a host writes only under its own hosts/HOST/ (RBAC), but what it writes there is its
          // own say: a report counts only under the exact key of the host it names
          String host = link.keys().hostOf(kv.getKey());
          if (host == null) {
            return;
          }
          if (kv.getKey().equals(link.keys().hostSessions(host))) {
            try {
              int n = Integer.parseInt(kv.getValue().toString(StandardCharsets.UTF_8));
              if (n >= 0) {
                sessions.put(host, n);
              }
            } catch (NumberFormatException e) {
              // one bad entry does not hide the others
            }
          } else if (kv.getKey().equals(link.keys().hostPolicy(host))) {
            try {
              HostPolicyState s = HostPolicyState.parse(kv.getValue().getBytes());
              if (s.host().equals(host)) {
                hosts.add(s);
              }
            } catch (ClusterException e) {
              // one bad entry does not hide the others
            }
          }
        });
    hosts.sort(Comparator.comparing(HostPolicyState::host));
    return new View(rev, sha, hosts, sessions);
  }

  static String sha256(byte[] b) {
    try {
      return java.util.HexFormat.of()
          .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(b));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
