package io.srdma.cluster;

import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;

/**
 * Where a deployment keeps its shared state in etcd, all under one prefix:
 *
 * <pre>
 * PREFIX/policy                 the policy file's text (YAML), written by srdma policy push (CAS)
 * PREFIX/crl                    the deployment CA's signed CRL (PEM), written by srdma cert revoke
 * PREFIX/revoked/SERIAL         one key per revoked serial (hex): {"serial":..,"at":..}
 * PREFIX/hosts/HOST/policy      what HOST runs: {"sha256":..,"applied":..,"revision":..}
 * PREFIX/hosts/HOST/sessions    HOST's live session count (decimal), when it changed
 * PREFIX/hosts/HOST/audit-head  HOST's audit chain head: {"host":..,"seq":..,"mac":..,"at":..}
 * PREFIX/hosts/HOST/audit-reset the anchor an operator dropped (srdma cluster audit-reset), with
 *                               when and why: {"host":..,"seq":..,"mac":..,"at":..,"reset":..,..}
 * PREFIX/grants/HOST/ID         one live grant of HOST, leased until the grant's expiry
 * PREFIX/requests/FROM/HOST/ID  FROM's console asks HOST to revoke its grant ID (the grant's JSON),
 *                               leased until the grant's expiry; HOST watches PREFIX/requests/
 * </pre>
 *
 * <p>Under etcd RBAC ({@link ClusterRbac}) a host writes only {@code hosts/HOST/}, {@code
 * grants/HOST/} and {@code requests/HOST/}, and reads the rest.
 */
public final class ClusterKeys {
  private final String prefix;

  ClusterKeys(String prefix) {
    this.prefix = prefix;
  }

  /** The deployment's prefix. */
  public String prefix() {
    return prefix;
  }

  /** The policy text. */
  public ByteSequence policy() {
    return bytes(prefix + "/policy");
  }

  /** The CA-signed CRL. */
  public ByteSequence crl() {
    return bytes(prefix + "/crl");
  }

  /** The key of one revoked serial. */
  public ByteSequence revoked(String serialHex) {
    return bytes(prefix + "/revoked/" + serialHex);
  }

  /** The prefix of every revoked serial's key. */
  public ByteSequence revokedPrefix() {
    return bytes(prefix + "/revoked/");
  }

  /** What a host reports about the policy it runs. */
  public ByteSequence hostPolicy(String host) {
    return bytes(prefix + "/hosts/" + host + "/policy");
  }

  /** One live grant of a host. */
  public ByteSequence grant(String host, long grantId) {
    return bytes(prefix + "/grants/" + host + "/" + grantId);
  }

  /** The prefix of one host's live grants. */
  public ByteSequence grantsOf(String host) {
    return bytes(prefix + "/grants/" + host + "/");
  }

  /** The prefix of every live grant of the deployment. */
  public ByteSequence grants() {
    return bytes(prefix + "/grants/");
  }

  /** A request of host {@code from} that {@code host} revoke its grant {@code grantId}. */
  public ByteSequence revokeRequest(String from, String host, long grantId) {
    return bytes(prefix + "/requests/" + from + "/" + host + "/" + grantId);
  }

  /** The prefix of every revoke request of the deployment. */
  public ByteSequence requests() {
    return bytes(prefix + "/requests/");
  }

  /** The host a revoke request (a key under {@link #requests()}) is addressed to, or null. */
  String requestTarget(ByteSequence key) {
    String k = key.toString(StandardCharsets.UTF_8);
    String p = prefix + "/requests/";
    if (!k.startsWith(p)) {
      return null;
    }
    String[] parts = k.substring(p.length()).split("/", -1);
    return parts.length == 3 ? parts[1] : null;
  }

  /** The requesting host of a revoke request key, or null. */
  String requestSource(ByteSequence key) {
    String k = key.toString(StandardCharsets.UTF_8);
    String p = prefix + "/requests/";
    if (!k.startsWith(p)) {
      return null;
    }
    String[] parts = k.substring(p.length()).split("/", -1);
    return parts.length == 3 ? parts[0] : null;
  }

  /** The grant id at the end of a grant key, or -1. */
  static long grantIdOf(ByteSequence key) {
    String k = key.toString(StandardCharsets.UTF_8);
    try {
      return Long.parseLong(k.substring(k.lastIndexOf('/') + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** A host's live session count. */
  public ByteSequence hostSessions(String host) {
    return bytes(prefix + "/hosts/" + host + "/sessions");
  }

  /** A host's anchored audit head. */
  public ByteSequence auditHead(String host) {
    return bytes(prefix + "/hosts/" + host + "/audit-head");
  }

  /** The anchor an operator last dropped for a host, with when and why. */
  public ByteSequence auditReset(String host) {
    return bytes(prefix + "/hosts/" + host + "/audit-reset");
  }

  /** The prefix of every host's keys. */
  public ByteSequence hostsPrefix() {
    return bytes(prefix + "/hosts/");
  }

  /** The host name in a key under {@link #hostsPrefix()}, or null. */
  String hostOf(ByteSequence key) {
    String k = key.toString(StandardCharsets.UTF_8);
    String p = prefix + "/hosts/";
    if (!k.startsWith(p)) {
      return null;
    }
    int slash = k.indexOf('/', p.length());
    return slash < 0 ? null : k.substring(p.length(), slash);
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
