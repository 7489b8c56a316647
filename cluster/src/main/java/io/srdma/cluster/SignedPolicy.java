package io.srdma.cluster;

import io.srdma.keys.DeploymentCa;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A policy as etcd holds it: the policy file's exact bytes, a serial, and the deployment CA's
 * signature over both and the deployment's prefix. etcd carries the policy, it does not vouch for
 * it: a host puts it in force only if the signature verifies against the CA it trusts, for its own
 * prefix, with a serial not below the highest it applied, kept across restarts (so a signed policy
 * can be neither forged by a writer to etcd, moved into another deployment, nor rolled back).
 *
 * <pre>
 * srdma-signed-policy/1\n
 * prefix: PREFIX\n                  the deployment it was signed for (optional; informative only)
 * serial: SERIAL\n                  decimal, 1..2^63-1
 * signature: BASE64\n               DER ECDSA P-256 / SHA-256 by the deployment CA
 * \n
 * POLICY BYTES                      exactly the pushed file
 * </pre>
 *
 * <p>The signed statement is {@code "srdma-policy-statement/1\nprefix LEN PREFIX\nserial
 * SERIAL\nlength N\n"} followed by the N policy bytes; the lengths make it unambiguous. The {@code
 * prefix:} line is not trusted: a host verifies for its own prefix, and reads the declared one only
 * to say why it refused (a policy of another deployment rather than of another CA).
 */
public final class SignedPolicy {
  private static final String MAGIC = "srdma-signed-policy/1\n";
  private static final String STATEMENT_TAG = "srdma-policy-statement/1\n";
  private static final String ALGORITHM = "SHA256withECDSA";
  private static final int MAX_HEADER = 1024;
  private static final Pattern HEADER =
      Pattern.compile(
          "(?:prefix: ([!-~]{1,600})\n)?serial: ([1-9][0-9]{0,18})\n"
              + "signature: ([A-Za-z0-9+/=]{16,200})\n\n");

  private final String declaredPrefix;
  private final long serial;
  private final byte[] signature;
  private final byte[] policy;

  private SignedPolicy(String declaredPrefix, long serial, byte[] signature, byte[] policy) {
    this.declaredPrefix = declaredPrefix;
    this.serial = serial;
    this.signature = signature;
    this.policy = policy;
  }

  /** The serial; every push has a larger one. */
  public long serial() {
    return serial;
  }

  /** The prefix the envelope says it was signed for (unverified), or null if it says none. */
  public String declaredPrefix() {
    return declaredPrefix;
  }

  /** The policy file's bytes. */
  public byte[] policy() {
    return policy.clone();
  }

  /**
   * Signs a policy for a deployment with its CA.
   *
   * @param ca the deployment CA (its key signs)
   * @param prefix the deployment's etcd prefix
   * @param serial above every serial pushed before
   * @param policy the policy file's bytes
   * @return what is written to {@code PREFIX/policy}
   */
  public static byte[] sign(DeploymentCa ca, String prefix, long serial, byte[] policy) {
    if (serial <= 0) {
      throw new IllegalArgumentException("serial must be positive: " + serial);
    }
    if (!prefix.matches("[!-~]{1,600}")) {
      throw new IllegalArgumentException("not a deployment prefix: " + prefix);
    }
    byte[] sig = ca.signStatement(statement(prefix, serial, policy));
    byte[] head =
        (MAGIC
                + "prefix: "
                + prefix
                + "\nserial: "
                + serial
                + "\nsignature: "
                + Base64.getEncoder().encodeToString(sig)
                + "\n\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] out = Arrays.copyOf(head, head.length + policy.length);
    System.arraycopy(policy, 0, out, head.length, policy.length);
    return out;
  }

  /**
   * Reads the envelope without checking the signature ({@code policy status} shows the hash).
   *
   * @throws ClusterException {@link ClusterException.Reason#MALFORMED} if it is not a signed policy
   */
  public static SignedPolicy parse(byte[] value) {
    byte[] magic = MAGIC.getBytes(StandardCharsets.US_ASCII);
    if (value.length < magic.length
        || !Arrays.equals(value, 0, magic.length, magic, 0, magic.length)) {
      throw malformed("it is not a signed policy (an unsigned text was written to etcd)");
    }
    int end = -1;
    int limit = Math.min(value.length - 1, magic.length + MAX_HEADER);
    for (int i = magic.length; i < limit; i++) {
      if (value[i] == '\n' && value[i + 1] == '\n') {
        end = i + 2;
        break;
      }
    }
    if (end < 0) {
      throw malformed("its signature header is malformed");
    }
    String header = new String(value, magic.length, end - magic.length, StandardCharsets.US_ASCII);
    Matcher m = HEADER.matcher(header);
    if (!m.matches()) {
      throw malformed("its signature header is malformed");
    }
    long serial;
    byte[] sig;
    try {
      serial = Long.parseLong(m.group(2));
      sig = Base64.getDecoder().decode(m.group(3));
    } catch (IllegalArgumentException e) {
      throw malformed("its signature header is malformed");
    }
    return new SignedPolicy(m.group(1), serial, sig, Arrays.copyOfRange(value, end, value.length));
  }

  /**
   * Reads the envelope and checks the CA's signature for this deployment's prefix.
   *
   * @throws ClusterException {@link ClusterException.Reason#MALFORMED} if it is not a signed
   *     policy, {@link ClusterException.Reason#REFUSED} if the signature does not verify (another
   *     CA, another deployment, or altered)
   */
  public static SignedPolicy verify(byte[] value, String prefix, X509Certificate ca) {
    SignedPolicy p = parse(value);
    if (!p.signedBy(ca, prefix)) {
      throw new ClusterException(
          ClusterException.Reason.REFUSED,
          "its signature does not verify against the deployment CA for prefix "
              + prefix
              + " (signed by another CA, for another deployment, or altered)");
    }
    return p;
  }

  /** Whether {@code ca} signed this policy for {@code prefix}. */
  boolean signedBy(X509Certificate ca, String prefix) {
    try {
      Signature s = Signature.getInstance(ALGORITHM);
      s.initVerify(ca.getPublicKey());
      s.update(statement(prefix, serial, policy));
      return s.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  static byte[] statement(String prefix, long serial, byte[] policy) {
    byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
    byte[] head =
        (STATEMENT_TAG
                + "prefix "
                + p.length
                + " "
                + prefix
                + "\nserial "
                + serial
                + "\nlength "
                + policy.length
                + "\n")
            .getBytes(StandardCharsets.UTF_8);
    byte[] out = Arrays.copyOf(head, head.length + policy.length);
    System.arraycopy(policy, 0, out, head.length, policy.length);
    return out;
  }

  private static ClusterException malformed(String why) {
    return new ClusterException(ClusterException.Reason.MALFORMED, why);
  }
}
